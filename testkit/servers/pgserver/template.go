package pgserver

import (
	"context"
	"fmt"
	"hash/fnv"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/hotspotkit/hotspotkit/testkit/servers/serverproc"
)

// TemplateDirEnv names a directory in which Start keeps one initialised data directory (a
// template) per PostgreSQL binaries, server user and database, and starts every server from
// a copy of it instead of running initdb and creating the database: on a small virtual
// machine initdb alone costs about a second of CPU, a copy a tenth of that. It is for test
// runs that start many servers (make test points it at a directory it removes afterwards);
// a run without it initialises its server as always. A server started from a template has
// the template's password (random, made with the template) instead of one of its own, and
// is otherwise the same: the template is a server that was started, had its database
// created, and was stopped cleanly.
const TemplateDirEnv = "HOTSPOTKIT_PG_TEMPLATE_DIR"

// fromTemplate fills s.dataDir with a copy of the template under dir, making the template
// first when there is none. Processes sharing dir take turns (serverproc.WithTemplate), so the
// template is made once.
func (s *Server) fromTemplate(ctx context.Context, dir string) error {
	h := fnv.New32a()
	h.Write([]byte(s.bins.BinDir))
	base := filepath.Join(dir, fmt.Sprintf("pg%s-%08x-uid%d-%s", s.bins.Version, h.Sum32(), s.uid, s.cfg.Database))
	return serverproc.WithTemplate(base, func(next string) error { return s.makeTemplate(ctx, dir, next) }, func(base string) error {
		password, err := os.ReadFile(filepath.Join(base, "password"))
		if err != nil {
			return err
		}
		if out, err := exec.CommandContext(ctx, "cp", "-a", filepath.Join(base, "data"), s.dataDir).CombinedOutput(); err != nil {
			return fmt.Errorf("copying the template: %v: %s", err, out)
		}
		s.password = string(password)
		return nil
	})
}

// makeTemplate starts a server as s would be started (without a template) in dir, stops it
// cleanly and keeps its data directory and password in next.
func (s *Server) makeTemplate(ctx context.Context, dir, next string) error {
	cfg := s.cfg
	cfg.TempDir, cfg.noTemplate = dir, true
	t, err := Start(ctx, cfg)
	if err != nil {
		return err
	}
	defer t.Stop()
	if err := t.stopProcess(); err != nil {
		return err
	}
	if err := os.Rename(t.dataDir, filepath.Join(next, "data")); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(next, "password"), []byte(t.password), 0o600)
}
