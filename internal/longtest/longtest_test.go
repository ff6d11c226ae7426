package longtest

import "testing"

// TestSwitch: only KVSIMD_LONG=1 asks for the long sweeps, and then a test's shorter
// form runs under -short alone.
func TestSwitch(t *testing.T) {
	for _, c := range []struct {
		env  string
		long bool
	}{{"", false}, {"0", false}, {"true", false}, {"1", true}} {
		t.Setenv("KVSIMD_LONG", c.env)
		if Enabled() != c.long || Short() != (testing.Short() || !c.long) {
			t.Errorf("KVSIMD_LONG=%q: Enabled %v, Short %v under -short %v", c.env, Enabled(), Short(), testing.Short())
		}
	}
}
