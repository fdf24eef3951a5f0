package network

import (
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// newPollLoop is an event loop with only its wake-up eventfd registered.
func newPollLoop(t *testing.T) *eventLoop {
	t.Helper()
	epfd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		t.Fatal(err)
	}
	wfd, err := unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(epfd); unix.Close(wfd) })
	if err := unix.EpollCtl(epfd, unix.EPOLL_CTL_ADD, wfd, &unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(wfd)}); err != nil {
		t.Fatal(err)
	}
	return &eventLoop{epfd: epfd, wakefd: wfd, events: make([]unix.EpollEvent, 8)}
}

// busyPoll returns the event that comes while it polls, and polls the whole
// time it was given when none comes.
func TestBusyPoll(t *testing.T) {
	l := newPollLoop(t)
	start := time.Now()
	if n, err := l.busyPoll(2 * time.Millisecond); n != 0 || err != nil {
		t.Fatalf("busyPoll with no event = %d, %v", n, err)
	}
	if d := time.Since(start); d < 2*time.Millisecond {
		t.Fatalf("busyPoll gave up after %v, before its 2ms", d)
	}
	go func() {
		time.Sleep(time.Millisecond)
		signal(l.wakefd)
	}()
	n, err := l.busyPoll(time.Minute)
	if n != 1 || err != nil || l.events[0].Fd != int32(l.wakefd) {
		t.Fatalf("busyPoll = %d, %v, fd %d; want the eventfd's event", n, err, l.events[0].Fd)
	}
}

// A signal that interrupts the loop's epoll_wait (EINTR: epoll_wait is never
// restarted) leaves the loop serving. unix.EpollWait reports it as -1
// events, which once stopped the loop with an index out of range.
func TestLoopSurvivesSignals(t *testing.T) {
	h := &fakeHost{}
	n, addr := start(t, false, h)
	c, r := pinged(t, addr)
	l := n.loops[0]
	tid := int(l.tid.Load())
	if tid == 0 {
		t.Fatal("the loop did not record its thread")
	}
	for i := 0; i < 20; i++ {
		time.Sleep(5 * time.Millisecond) // idle: past the raw wait, in the runtime's EpollWait
		if err := unix.Tgkill(unix.Getpid(), tid, unix.SIGURG); err != nil {
			t.Fatal(err)
		}
	}
	send(t, c, "PING\r\n")
	expect(t, r, "+PING")
}
