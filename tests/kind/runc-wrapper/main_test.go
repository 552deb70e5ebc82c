package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSpecFile(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--root", "/run/runc", "--log", "/l.json", "create", "--bundle", "/b", "id"}, "/b/config.json"},
		{[]string{"run", "--bundle=/b", "id"}, "/b/config.json"},
		{[]string{"create", "id"}, "config.json"},
		{[]string{"--root", "exec", "exec", "--process", "/p.json", "id"}, "/p.json"},
		{[]string{"exec", "-p", "/p.json", "id"}, "/p.json"},
		{[]string{"exec", "id", "true"}, ""},
		{[]string{"start", "id"}, ""},
		{[]string{"--log", "create", "kill", "id"}, ""},
	} {
		got, _ := specFile(c.args)
		if got != c.want {
			t.Errorf("specFile(%q) = %q, want %q", c.args, got, c.want)
		}
	}
}

func TestDropCapability(t *testing.T) {
	dir := t.TempDir()
	config := filepath.Join(dir, "config.json")
	spec := `{"ociVersion":"1.0.2","process":{"user":{"uid":4294967294},"capabilities":{` +
		`"bounding":["CAP_CHOWN","CAP_SYS_RESOURCE"],"effective":["CAP_SYS_RESOURCE","CAP_KILL"]}},` +
		`"linux":{"resources":{"memory":{"limit":9007199254740993}}}}`
	if err := os.WriteFile(config, []byte(spec), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := dropCapability([]string{"create", "--bundle", dir, "id"}); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(config)
	got := string(data)
	for _, want := range []string{`"bounding":["CAP_CHOWN"]`, `"effective":["CAP_KILL"]`, `4294967294`, `9007199254740993`} {
		if !strings.Contains(got, want) {
			t.Errorf("config.json after dropping: %s; want %s in it", got, want)
		}
	}
	if strings.Contains(got, "CAP_SYS_RESOURCE") {
		t.Errorf("config.json still grants CAP_SYS_RESOURCE: %s", got)
	}
}
