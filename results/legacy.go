package results

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Transitional (issue 26): until the engine builds each run's RunConfig with NewRunConfig, it
// records a run's configuration as version 1 did, a map of flag names in Run.Config. Write
// converts that map into Run.Settings (the step Read takes for a version 1 report), and Read
// gives the map back from Settings for the engine's tests. This file goes when the engine
// fills Settings.

// settleLegacyConfigs converts each run's legacy Config map into its Settings, unless Read
// made the map from the Settings.
func (r *Report) settleLegacyConfigs() error {
	for i := range r.Runs {
		run := &r.Runs[i]
		if run.Config == nil || run.configFromSettings {
			continue
		}
		cfg, err := RunConfigFromLegacy(run.Config)
		if err != nil {
			return fmt.Errorf("run %d (%s): %w", i, run.Mode, err)
		}
		run.Settings = cfg
	}
	return nil
}

// fillLegacyConfigs gives each run its Config map back from Settings: flag names, numbers as
// float64, durations as Go durations, and the run's mode.
func (r *Report) fillLegacyConfigs() {
	flagOf := make(map[string]string, len(v1Keys))
	for name, k := range v1Keys {
		if k.key != "" {
			flagOf[k.key] = name
		}
	}
	for i := range r.Runs {
		run := &r.Runs[i]
		b, err := json.Marshal(run.Settings)
		var m map[string]any
		if err != nil || json.Unmarshal(b, &m) != nil {
			continue
		}
		legacy := map[string]any{"mode": run.Mode}
		for k, v := range m {
			switch {
			case k == "suite":
				suite, _ := v.(map[string]any)
				for sk, sv := range suite {
					legacy[SuiteFlag(sk)] = sv
				}
			case strings.HasSuffix(k, "_ms") && flagOf[k] != "" && !strings.HasSuffix(flagOf[k], "-ms"):
				ms, _ := v.(float64)
				legacy[flagOf[k]] = Duration(ms).String()
			case flagOf[k] != "":
				legacy[flagOf[k]] = v
			}
		}
		run.Config, run.configFromSettings = legacy, true
	}
}
