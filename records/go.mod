// The committed records (recorded runs, baselines, A/B runs) are a module of their own, with
// no Go code: a directory holding a go.mod is left out of the enclosing module's zip, so
// that a service importing github.com/hotspotkit/hotspotkit/queue downloads none of them.
module github.com/hotspotkit/hotspotkit/records

go 1.26.8
