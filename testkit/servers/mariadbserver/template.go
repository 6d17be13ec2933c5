package mariadbserver

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
// template) per MariaDB installation and server user, and starts every server from a copy of
// it instead of running mariadb-install-db: about a second of a start and a quarter of a
// CPU-second saved per server on a small virtual machine. It is for test runs that start many
// servers (make test points it at a directory it removes afterwards); a run without it
// initialises its server as always. A server started from a template has the template's root
// password (random, made with the template) instead of one of its own, and is otherwise the
// same: the template is a data directory mariadb-install-db made, never started.
const TemplateDirEnv = "HOTSPOTKIT_MARIADB_TEMPLATE_DIR"

// fromTemplate fills s.dataDir with a copy of the template under dir. When there is none yet,
// s initialises its own data directory, which the template becomes a copy of. Processes
// sharing dir take turns (serverproc.WithTemplate), so the template is made once.
func (s *Server) fromTemplate(ctx context.Context, dir string) error {
	h := fnv.New32a()
	h.Write([]byte(s.bins.Server + "\x00" + s.bins.InstallDB))
	base := filepath.Join(dir, fmt.Sprintf("mariadb%s-%08x-uid%d", s.bins.Version, h.Sum32(), s.uid))
	made := false
	return serverproc.WithTemplate(base, func(next string) error {
		if err := s.install(ctx); err != nil {
			return err
		}
		made = true
		if err := s.runStep(ctx, exec.Command("cp", "-a", s.dataDir, filepath.Join(next, dataName)), "keeping the template"); err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(next, "password"), []byte(s.password), 0o600)
	}, func(base string) error {
		if made {
			return nil
		}
		password, err := os.ReadFile(filepath.Join(base, "password"))
		if err != nil {
			return err
		}
		if err := s.runStep(ctx, exec.Command("cp", "-a", filepath.Join(base, dataName), s.dataDir), "copying the template"); err != nil {
			return err
		}
		s.password = string(password)
		return nil
	})
}
