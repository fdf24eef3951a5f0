module github.com/hotkv/hotkv

go 1.26.8

require (
	github.com/bsm/redislock v0.9.4
	github.com/chzyer/readline v1.5.1
	github.com/creack/pty v1.1.24
	github.com/go-redsync/redsync/v4 v4.18.1
	github.com/mattn/go-isatty v0.0.24
	github.com/prometheus/client_golang v1.23.2
	github.com/prometheus/client_model v0.6.2
	github.com/prometheus/common v0.66.1
	github.com/redis/go-redis/v9 v9.23.0
	github.com/yuin/gopher-lua v1.1.2
	github.com/zeebo/xxh3 v1.1.0
	golang.org/x/sys v0.48.0
)

require (
	github.com/beorn7/perks v1.0.1 // indirect
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/klauspost/cpuid/v2 v2.4.0 // indirect
	github.com/kr/text v0.2.0 // indirect
	github.com/munnerz/goautoneg v0.0.0-20191010083416-a7dc8b61c822 // indirect
	github.com/prometheus/procfs v0.16.1 // indirect
	go.uber.org/atomic v1.12.0 // indirect
	go.yaml.in/yaml/v2 v2.4.2 // indirect
	google.golang.org/protobuf v1.36.8 // indirect
)

replace github.com/yuin/gopher-lua => ./third_party/gopher-lua
