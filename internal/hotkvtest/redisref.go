package hotkvtest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The reference Redis: the tests that compare HotKV with a real redis-server
// (differential tests, the shell's help) run against Redis 8.6.3, the newest
// Redis that builds here (.ci/redis-ref.sh builds it from Debian's source
// package). Debian's redis-server 7.0 on PATH stays for what only it has:
// payloads and files of an older Redis.

// RefVersion is the Redis version HotKV's replies follow.
const RefVersion = "8.6.3"

// RedisRef returns the reference redis-server: $HOTKV_REDIS_REF, or the build
// .ci/redis-ref.sh leaves in ${XDG_CACHE_HOME:-$HOME/.cache}/hotkv/redis-ref;
// "" when neither exists.
func RedisRef() string {
	if p := os.Getenv("HOTKV_REDIS_REF"); p != "" {
		return p
	}
	cache := os.Getenv("XDG_CACHE_HOME")
	if cache == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return ""
		}
		cache = filepath.Join(home, ".cache")
	}
	p := filepath.Join(cache, "hotkv", "redis-ref", "redis", "src", "redis-server")
	if st, err := os.Stat(p); err == nil && st.Mode()&0o111 != 0 {
		return p
	}
	return ""
}

// RedisRefOrSkip is RedisRef, skipping the test with how to get it when it
// is not there (failing it instead when HOTKV_REQUIRE_REF is set, as CI
// does), and failing it when it is not version RefVersion.
func RedisRefOrSkip(t testing.TB) string {
	t.Helper()
	p := RedisRef()
	if p == "" {
		msg := "the reference redis-server " + RefVersion + " is not built: run .ci/redis-ref.sh (make redis-ref) or set HOTKV_REDIS_REF"
		if os.Getenv("HOTKV_REQUIRE_REF") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	out, err := exec.Command(p, "--version").Output()
	if err != nil {
		t.Fatalf("%s --version: %v", p, err)
	}
	if !strings.Contains(string(out), "v="+RefVersion+" ") {
		t.Fatalf("%s is not Redis %s: %s", p, RefVersion, out)
	}
	return p
}

// Redis70OrSkip returns Debian's redis-server 7.0 from PATH, skipping the
// test when it is not installed (CI installs it: apt-get install redis-server).
func Redis70OrSkip(t testing.TB) string {
	t.Helper()
	p, err := exec.LookPath("redis-server")
	if err != nil {
		t.Skip("redis-server (Debian's 7.0) is not on PATH: the comparison with Redis 7.0 is skipped")
	}
	out, err := exec.Command(p, "--version").Output()
	if err != nil || !strings.Contains(string(out), "v=7.0.") {
		t.Skipf("redis-server on PATH is not Redis 7.0 (%s): the comparison with Redis 7.0 is skipped", strings.TrimSpace(string(out)))
	}
	return p
}

// RedisExporterOrSkip returns the redis_exporter binary (oliver006's, the
// exporter Redis dashboards are made for): $HOTKV_REDIS_EXPORTER, or the build
// .ci/redis-exporter.sh leaves in
// ${XDG_CACHE_HOME:-$HOME/.cache}/hotkv/redis_exporter-v1.88.0. It skips the
// test with how to get it when absent (fails it when HOTKV_REQUIRE_EXPORTER
// is set, as CI does).
func RedisExporterOrSkip(t testing.TB) string {
	t.Helper()
	p := os.Getenv("HOTKV_REDIS_EXPORTER")
	if p == "" {
		cache := os.Getenv("XDG_CACHE_HOME")
		if cache == "" {
			if home, err := os.UserHomeDir(); err == nil {
				cache = filepath.Join(home, ".cache")
			}
		}
		p = filepath.Join(cache, "hotkv", "redis_exporter-v1.88.0", "redis_exporter")
	}
	if st, err := os.Stat(p); err != nil || st.Mode()&0o111 == 0 {
		msg := "redis_exporter is not built: run .ci/redis-exporter.sh or set HOTKV_REDIS_EXPORTER"
		if os.Getenv("HOTKV_REQUIRE_EXPORTER") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return p
}

// ChromiumOrSkip returns a headless-capable Chromium on PATH (Debian's
// chromium package), skipping the test when there is none (failing it when
// HOTKV_REQUIRE_CHROMIUM is set, as CI does).
func ChromiumOrSkip(t testing.TB) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	msg := "no chromium on PATH (Debian: apt-get install chromium): the status page's browser test needs one"
	if os.Getenv("HOTKV_REQUIRE_CHROMIUM") != "" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}
