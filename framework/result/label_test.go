package result

import "testing"

// A comparison names what it compares: engine, version (or that it is
// unknown), address and model where known; the simulator by its profile.
func TestTargetLabel(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		f    File
		want string
	}{
		{File{Target: Target{Kind: "url", URL: "http://h:11434", Model: "llama3"}, Engine: &Engine{Name: "ollama", Version: "0.6.5"}}, "ollama 0.6.5 at http://h:11434, model llama3"},
		{File{Target: Target{Kind: "url", URL: "http://h:8080", Model: "tiny"}, Engine: &Engine{Name: "llama.cpp"}}, "llama.cpp (version unknown) at http://h:8080, model tiny"},
		{File{Target: Target{Kind: "launch", URL: "http://h:8000"}, Engine: &Engine{Name: "unknown"}}, "launch http://h:8000"},
		{File{Target: Target{Kind: "url", URL: "http://h:8000", Model: "m"}}, "url http://h:8000, model m"},
		{File{Target: Target{Kind: "sim", URL: "http://127.0.0.1:1", Model: "m", Sim: &SimProfile{Name: "llama3-70b-h100x4"}}}, "sim llama3-70b-h100x4"},
	} {
		if got := tc.f.TargetLabel(); got != tc.want {
			t.Errorf("TargetLabel = %q, want %q", got, tc.want)
		}
	}
}
