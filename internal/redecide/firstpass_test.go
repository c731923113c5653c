package redecide

import "testing"

func closed(s *FirstPass) bool {
	select {
	case <-s.Done():
		return true
	default:
		return false
	}
}

func TestFirstPass(t *testing.T) {
	s := NewFirstPass()
	s.Reconciled("rb/a") // reconciled before the list came
	if closed(s) {
		t.Fatal("done before the bindings were listed")
	}
	s.Listed([]string{"rb/a", "rb/b", "crb/c"})
	if closed(s) {
		t.Fatal("done with rb/b and crb/c not reconciled")
	}
	s.Reconciled("rb/b")
	s.Reconciled("rb/new") // came after the list: not waited for
	if closed(s) {
		t.Fatal("done with crb/c not reconciled")
	}
	s.Reconciled("crb/c")
	if !closed(s) {
		t.Fatal("not done after every listed binding was reconciled")
	}
	s.Reconciled("crb/c") // again: no panic on a closed signal
}

func TestFirstPassWithNoBindings(t *testing.T) {
	s := NewFirstPass()
	s.Listed(nil)
	if !closed(s) {
		t.Fatal("a hub with no binding is done at once")
	}
	var none *FirstPass
	if !closed(none) {
		t.Fatal("no signal (no binding controller) is done")
	}
}

func TestFirstPassGiveUp(t *testing.T) {
	s := NewFirstPass()
	s.Listed([]string{"rb/b", "rb/a", "rb/c"})
	s.Reconciled("rb/c")
	if got := s.GiveUp(); len(got) != 2 || got[0] != "rb/a" || got[1] != "rb/b" {
		t.Errorf("GiveUp() = %v, want the bindings not decided: [rb/a rb/b]", got)
	}
	if !closed(s) {
		t.Fatal("not done after giving up")
	}
	if got := s.GiveUp(); got != nil {
		t.Errorf("GiveUp() once done = %v, want none", got)
	}
	s.Reconciled("rb/a") // after: no panic
}
