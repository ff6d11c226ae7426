// Package longtest owns the switch for the tests' long sweeps: KVSIMD_LONG=1, which
// CI (.ci/run) sets for its native go test ./... step. Without it, the tests that have
// a shorter form (fewer shapes, prompts or build configurations, every code path still
// taken) run that form, as they do under -short, so that a plain go test ./... stays
// within a minute and a half on a 2-vCPU machine; CI still runs every sweep.
package longtest

import (
	"os"
	"testing"
)

// Enabled reports whether KVSIMD_LONG=1 asks for the long sweeps.
func Enabled() bool { return os.Getenv("KVSIMD_LONG") == "1" }

// Short reports whether a test runs its shorter form: under -short (the emulators and
// the race run) and whenever the long sweeps are not asked for.
func Short() bool { return testing.Short() || !Enabled() }
