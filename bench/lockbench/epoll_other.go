//go:build !linux

package main

import (
	"fmt"
	"time"
)

const defaultEngine = "go"

func runEpoll(string, int, int, releaser, time.Duration) (int64, time.Duration, error) {
	return 0, 0, fmt.Errorf("-engine epoll needs Linux; use -engine go")
}
