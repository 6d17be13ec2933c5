package results

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
)

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// Store files the report at path, with its NDJSON samples when they exist, as
// dir/<machine class>/<suite>.json (and .json.samples.ndjson), so baselines of comparable
// machines sit together. It returns the path written.
func Store(dir, path string) (string, error) {
	rep, err := ReadFile(path)
	if err != nil {
		return "", err
	}
	class := rep.Environment.MachineClass
	if class == "" {
		class = "unknown"
	}
	destDir := filepath.Join(dir, unsafeName.ReplaceAllString(class, "_"))
	if err := os.MkdirAll(destDir, 0o755); err != nil {
		return "", err
	}
	dest := filepath.Join(destDir, unsafeName.ReplaceAllString(rep.Suite, "_")+".json")
	samples := SamplesPath(path)
	rep.SamplesFile = ""
	if _, err := os.Stat(samples); err == nil {
		b, err := os.ReadFile(samples)
		if err != nil {
			return "", err
		}
		if err := os.WriteFile(SamplesPath(dest), b, 0o644); err != nil {
			return "", err
		}
		rep.SamplesFile = filepath.Base(SamplesPath(dest))
	}
	if err := rep.WriteFile(dest); err != nil {
		return "", fmt.Errorf("writing %s: %w", dest, err)
	}
	return dest, nil
}
