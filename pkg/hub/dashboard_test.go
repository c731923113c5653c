package hub

import "testing"

func TestDashboardAddr(t *testing.T) {
	for in, want := range map[string]string{
		"": "", "0": "", ":8090": "127.0.0.1:8090", "0.0.0.0:8090": "0.0.0.0:8090",
		"127.0.0.1:0": "127.0.0.1:0", "[::1]:8090": "[::1]:8090",
	} {
		if got := DashboardAddr(in); got != want {
			t.Errorf("DashboardAddr(%q) = %q, want %q", in, got, want)
		}
	}
}
