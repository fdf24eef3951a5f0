package command

import "testing"

// TestProtectedCommandsHaveAGate: admission refuses a Protected command by its
// Gate's parameter, so every Protected command names one, and only those do.
func TestProtectedCommandsHaveAGate(t *testing.T) {
	n := 0
	for name, s := range allSpecs(t) {
		switch {
		case s.Flags&Protected != 0 && s.Gate == nil:
			t.Errorf("%s is protected but names no gate", name)
		case s.Flags&Protected == 0 && s.Gate != nil:
			t.Errorf("%s names a gate but is not protected", name)
		case s.Gate != nil:
			n++
		}
	}
	if n != 4 { // DEBUG; MODULE LOAD, LOADEX, UNLOAD
		t.Errorf("%d protected commands, want 4", n)
	}
}
