module github.com/hotkv/hotkv

go 1.26.8

require (
	github.com/bsm/redislock v0.9.4
	github.com/chzyer/readline v1.5.1
	github.com/creack/pty v1.1.24
	github.com/go-redsync/redsync/v4 v4.18.1
	github.com/mattn/go-isatty v0.0.24
	github.com/redis/go-redis/v9 v9.23.0
	github.com/yuin/gopher-lua v1.1.2
	github.com/zeebo/xxh3 v1.1.0
	golang.org/x/sys v0.48.0
)

require (
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/klauspost/cpuid/v2 v2.4.0 // indirect
	go.uber.org/atomic v1.12.0 // indirect
)

replace github.com/yuin/gopher-lua => ./third_party/gopher-lua
