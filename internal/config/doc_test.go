package config

import (
	"flag"
	"os"
	"strings"
	"testing"
)

var updateDoc = flag.Bool("update", false, "rewrite docs/config.md from the parameter table")

// docs/config.md lists every parameter from the table itself: what HotKV
// honours, and what it accepts, stores and prints but does not act on yet
// (issue 26's "one place"); a change to the table that leaves it stale fails
// here (go test ./internal/config -update rewrites it).
func TestConfigDoc(t *testing.T) {
	const path = "../../docs/config.md"
	want := renderConfigDoc(New().Params())
	if *updateDoc {
		if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Fatalf("%s is out of date with the parameter table: go test ./internal/config -update", path)
	}
}

func renderConfigDoc(ps []ParamInfo) string {
	var b strings.Builder
	b.WriteString(`# Configuration parameters

Generated from the parameter table (internal/config/params.go) by
` + "`go test ./internal/config -update`" + `; a test fails when it is out of date.

HotKV accepts every redis.conf parameter of Redis 8.6 with Redis's names, aliases,
bounds, defaults and errors, so that tools and client libraries that read or set
them keep working. The first table is what HotKV acts on. The second is what it
accepts, stores, prints (CONFIG GET) and rewrites (CONFIG REWRITE) but does not
act on yet. A value HotKV cannot honour where a user sets it for safety or
security is refused instead of stored: ` + "`cluster-enabled yes`" + ` (standalone only),
` + "`activedefrag yes`" + ` (as Redis without its jemalloc), and the config file's
` + "`loadmodule`" + ` lines.

## Honoured

| parameter | default | |
|---|---|---|
`)
	row := func(p ParamInfo) {
		name := p.Name
		if p.Alias != "" {
			name += " (" + p.Alias + ")"
		}
		def := "`" + p.Default + "`"
		switch {
		case p.Name == "dir":
			def = "the working directory" // its default is where the server starts
		case p.Default == "":
			def = "`\"\"`"
		}
		b.WriteString("| `" + name + "` | " + def + " | " + p.Doc + " |\n")
	}
	for _, p := range ps {
		if p.Honoured {
			row(p)
		}
	}
	b.WriteString("\n## Accepted and stored, not acted on yet\n\n| parameter | default | |\n|---|---|---|\n")
	for _, p := range ps {
		if !p.Honoured {
			row(p)
		}
	}
	return b.String()
}
