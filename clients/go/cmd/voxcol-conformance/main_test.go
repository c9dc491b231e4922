package main

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/voxcol/voxcol/clients/go/internal/servertest"
)

// readLines parses the runner's output.
func readLines(t *testing.T, path string) []map[string]any {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var lines []map[string]any
	s := bufio.NewScanner(f)
	s.Buffer(nil, 1<<24)
	for s.Scan() {
		var m map[string]any
		if err := json.Unmarshal(s.Bytes(), &m); err != nil {
			t.Fatalf("line %q: %v", s.Text(), err)
		}
		lines = append(lines, m)
	}
	return lines
}

// Every step of the every-call scenario runs, in order, and ends with its expected code.
func TestRunnerEveryCall(t *testing.T) {
	srv := servertest.StartT(t)
	scenarioFile := "testdata/every_call.json"
	var sc struct {
		Steps []struct {
			Call       string `json:"call"`
			ExpectCode int    `json:"expect_code"`
			Take       int    `json:"take"`
			Requests   []any  `json:"requests"`
		} `json:"steps"`
	}
	data, err := os.ReadFile(scenarioFile)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &sc); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "every_call.jsonl")
	r := runner{target: srv.Addr}
	if err := r.run(scenarioFile, out); err != nil {
		t.Fatal(err)
	}
	lines := readLines(t, out)
	if len(lines) != len(sc.Steps) {
		t.Fatalf("%d lines for %d steps", len(lines), len(sc.Steps))
	}
	for i, st := range sc.Steps {
		l := lines[i]
		if l["scenario"] != "every_call" || l["step"] != float64(i) || l["call"] != st.Call {
			t.Errorf("line %d: %v", i, l)
		}
		if _, skipped := l["skipped"]; skipped {
			t.Errorf("step %d (%s) skipped: %v", i, st.Call, l["skipped"])
			continue
		}
		if l["code"] != float64(st.ExpectCode) {
			t.Errorf("step %d (%s): code %v (%v), want %d", i, st.Call, l["code"], l["message"], st.ExpectCode)
		}
		responses := l["responses"].([]any)
		want := 1
		switch {
		case st.ExpectCode != 0:
			want = 0
		case st.Take > 0:
			want = st.Take
		case st.Requests != nil:
			want = len(st.Requests)
		}
		if len(responses) != want {
			t.Errorf("step %d (%s): %d responses, want %d", i, st.Call, len(responses), want)
		}
	}
	// The Query step's batch with an unreachable min_version keeps its batch-level code.
	q := lines[10]["responses"].([]any)
	if last := q[len(q)-1].(map[string]any); last["code"] != float64(9) || !strings.Contains(last["message"].(string), "min_version") {
		t.Errorf("the min_version batch: %v", last)
	}
}

// A secure scenario uses TLS with the given CA and the token.
func TestRunnerSecure(t *testing.T) {
	dir := t.TempDir()
	files, err := servertest.MakeTLS(dir)
	if err != nil {
		t.Fatal(err)
	}
	tokens := filepath.Join(dir, "tokens")
	if err := servertest.WriteTokens(tokens, map[string]string{"conformance": "admin runner"}); err != nil {
		t.Fatal(err)
	}
	ca := filepath.Join(dir, "ca.crt")
	if err := os.WriteFile(ca, files.CAPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	secure := servertest.StartT(t, "--tls_cert="+files.CertFile, "--tls_key="+files.KeyFile, "--auth_tokens="+tokens)
	scenarioFile := filepath.Join(dir, "secure.json")
	if err := os.WriteFile(scenarioFile, []byte(`{"name": "secure", "secure": true, "steps": [
		{"call": "EditService.FillBall", "request": {"center": {"x": 0.5, "y": 0, "z": 0.5}, "radius": 3, "material": 2}},
		{"call": "QueryService.Query", "requests": [{"minVersion": "1", "queries": [{"raycast": {"origin": {"x": 0.5, "y": 40, "z": 0.5}, "direction": {"y": -1}, "maxDistance": 90}}]}]}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "secure.jsonl")
	// The plaintext target is unused by a secure scenario: a closed port proves it.
	r := runner{target: "127.0.0.1:1", secureTarget: secure.Addr, caFile: ca, token: "conformance"}
	if err := r.run(scenarioFile, out); err != nil {
		t.Fatal(err)
	}
	lines := readLines(t, out)
	if len(lines) != 2 || lines[0]["code"] != float64(0) || lines[1]["code"] != float64(0) {
		t.Fatalf("secure scenario: %v", lines)
	}
	batch := lines[1]["responses"].([]any)[0].(map[string]any)
	if batch["version"] != "1" || batch["results"] == nil {
		t.Errorf("secure batch: %v", batch)
	}
	r.token = "wrong"
	if err := r.run(scenarioFile, out); err != nil {
		t.Fatal(err)
	}
	if lines := readLines(t, out); lines[0]["code"] != float64(16) {
		t.Errorf("wrong token: %v, want UNAUTHENTICATED", lines[0])
	}
}

func TestThroughput(t *testing.T) {
	srv := servertest.StartT(t)
	rate, err := throughput(srv.Addr, 300*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if rate < 1000 {
		t.Errorf("rays_per_second=%.0f", rate)
	}
	if _, err := throughput("127.0.0.1:1", 100*time.Millisecond); err == nil {
		t.Error("throughput against a closed port succeeded")
	}
}
