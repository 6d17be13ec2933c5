package main

import (
	"os"

	"github.com/hotspotkit/hotspotkit/results"
	"github.com/hotspotkit/hotspotkit/results/render"
)

func main() {
	rep, err := results.ReadFile(os.Args[1])
	if err != nil {
		panic(err)
	}
	render.Summary(os.Stdout, rep, render.SummaryOptions{Modes: []string{"sync", "outbox", "async", "async-compact"}, HotTables: []string{"api_keys", "provider_api_keys", "global_models", "providers"}, Wide: len(os.Args) > 2})
}
