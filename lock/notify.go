package lock

import (
	"context"
	"errors"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// watcher is one node's subscription connection, shared by every Obtain of the
// Locker that waits for a release on that node: waiters register per keyspace
// channel (__keyspace@<db>__:<key>), the first one SUBSCRIBEs and the last one
// UNSUBSCRIBEs, and one goroutine reads the connection and wakes the waiters of a
// channel when its key is deleted, expires, is evicted or is renamed or moved
// away. It lives until Locker.Close.
//
// A waiter counts on its channel only once the server confirmed the SUBSCRIBE
// (ready), so a release between "subscribe" and "attempt again" cannot be missed.
// Confirmations arrive in the order the SUBSCRIBE/UNSUBSCRIBE commands were sent,
// so a channel is subscribed when all the confirmations owed for it have arrived
// and the last command sent for it was a SUBSCRIBE (pend counts them).
type watcher struct {
	ps *redis.PubSub

	mu     sync.Mutex
	subs   map[string]*subEntry
	pend   map[string]int // confirmations still owed per channel
	closed bool
	done   chan struct{} // closed when the read loop ends
}

type subEntry struct {
	waiters map[*waiter]struct{}
	ready   chan struct{} // closed once subscribed
	isReady bool
}

// waiter is one waiting Obtain; wake is shared by its registrations on every
// node (Redlock) and holds at most one pending wake-up.
type waiter struct {
	wake chan struct{}
}

func (w *waiter) signal() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// releaseEvents are the keyspace events after which the lock may be free. Other
// events (set, expire: the holder refreshing) leave the waiters asleep.
var releaseEvents = map[string]bool{
	"del": true, "expired": true, "evicted": true, "rename_from": true, "move_from": true,
}

// receiveTimeout bounds one read of the subscription connection; after it the
// watcher PINGs, so that a dead connection is noticed and replaced.
const receiveTimeout = 15 * time.Second

func keyspaceChannel(db int, key string) string {
	return "__keyspace@" + strconv.Itoa(db) + "__:" + key
}

// watcher returns the node's watcher, starting it on first use.
func (n *node) watcher() *watcher {
	n.watchMu.Lock()
	defer n.watchMu.Unlock()
	if n.watch == nil {
		w := &watcher{
			ps:   n.sub.Subscribe(context.Background()),
			subs: map[string]*subEntry{},
			pend: map[string]int{},
			done: make(chan struct{}),
		}
		go w.loop()
		n.watch = w
	}
	return n.watch
}

func (n *node) closeWatcher() {
	n.watchMu.Lock()
	w := n.watch
	n.watch = nil
	n.watchMu.Unlock()
	if w != nil {
		w.close()
	}
}

// add registers wt on channel and returns a channel closed once the server has
// confirmed the subscription.
func (w *watcher) add(ctx context.Context, channel string, wt *waiter) (<-chan struct{}, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return nil, errors.New("lock: locker closed")
	}
	e := w.subs[channel]
	if e == nil {
		// Sent under w.mu so that the commands for one channel go out in the
		// order pend counts them.
		if err := w.ps.Subscribe(ctx, channel); err != nil {
			// go-redis keeps the channel for its next reconnection: drop it.
			_ = w.ps.Unsubscribe(ctx, channel)
			return nil, err
		}
		w.pend[channel]++
		e = &subEntry{waiters: map[*waiter]struct{}{}, ready: make(chan struct{})}
		w.subs[channel] = e
	}
	e.waiters[wt] = struct{}{}
	return e.ready, nil
}

// remove unregisters wt; the last waiter of a channel unsubscribes it.
func (w *watcher) remove(channel string, wt *waiter) {
	w.mu.Lock()
	defer w.mu.Unlock()
	e := w.subs[channel]
	if e == nil {
		return
	}
	delete(e.waiters, wt)
	if len(e.waiters) > 0 || w.closed {
		return
	}
	delete(w.subs, channel)
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if err := w.ps.Unsubscribe(ctx, channel); err == nil {
		w.pend[channel]++
	}
}

func (w *watcher) confirm(kind, channel string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.pend[channel] > 0 {
		w.pend[channel]--
	}
	if w.pend[channel] > 0 {
		return
	}
	delete(w.pend, channel)
	if e := w.subs[channel]; e != nil && kind == "subscribe" && !e.isReady {
		e.isReady = true
		close(e.ready)
	}
}

func (w *watcher) event(channel, payload string) {
	if !releaseEvents[payload] {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if e := w.subs[channel]; e != nil {
		for wt := range e.waiters {
			wt.signal()
		}
	}
}

// lost: the connection broke. go-redis reconnects on the next read and
// subscribes every channel again: each now owes exactly that one confirmation.
// Events may have been missed meanwhile, so every waiter tries again.
func (w *watcher) lost() {
	w.mu.Lock()
	defer w.mu.Unlock()
	clear(w.pend)
	for ch, e := range w.subs {
		w.pend[ch] = 1
		for wt := range e.waiters {
			wt.signal()
		}
	}
}

func (w *watcher) loop() {
	defer close(w.done)
	ctx := context.Background()
	pause := 50 * time.Millisecond
	for {
		msg, err := w.ps.ReceiveTimeout(ctx, receiveTimeout)
		w.mu.Lock()
		closed := w.closed
		w.mu.Unlock()
		if closed {
			return
		}
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				_ = w.ps.Ping(ctx) // the reply (or the failure) shows up in the next read
				continue
			}
			w.lost()
			time.Sleep(pause) // the server may be down: back off up to a second
			pause = min(2*pause, time.Second)
			continue
		}
		pause = 50 * time.Millisecond
		switch m := msg.(type) {
		case *redis.Subscription:
			w.confirm(m.Kind, m.Channel)
		case *redis.Message:
			w.event(m.Channel, m.Payload)
		}
	}
}

func (w *watcher) close() {
	w.mu.Lock()
	w.closed = true
	for _, e := range w.subs {
		for wt := range e.waiters {
			wt.signal()
		}
	}
	w.mu.Unlock()
	_ = w.ps.Close()
	<-w.done
}

// maxEventWait caps one sleep of a waiter between attempts, in case an event is
// lost (a reconnection, FLUSHALL and SWAPDB, which publish no keyspace events,
// a cluster node other than the subscribed one).
const maxEventWait = time.Second

// waitSet is one waiting Obtain's registrations, on every server that publishes
// keyspace events.
type waitSet struct {
	w    *waiter
	regs []waitReg
}

type waitReg struct {
	w       *watcher
	channel string
}

// subscribe registers a waiter for key's keyspace channel on every server that
// publishes the events (see node.notifications) and waits (at most a second) for
// the subscriptions to be confirmed. The result is inactive when no server
// qualifies: the caller then polls.
func (l *Locker) subscribe(ctx context.Context, key string) *waitSet {
	ws := &waitSet{w: &waiter{wake: make(chan struct{}, 1)}}
	var readies []<-chan struct{}
	for _, n := range l.nodes {
		if !n.notifications(ctx, l.enableNotify) {
			continue
		}
		w := n.watcher()
		ch := keyspaceChannel(n.db, key)
		ready, err := w.add(ctx, ch, ws.w)
		if err != nil {
			continue
		}
		ws.regs = append(ws.regs, waitReg{w, ch})
		readies = append(readies, ready)
	}
	t := time.NewTimer(time.Second)
	defer t.Stop()
	for _, r := range readies {
		select {
		case <-r:
		case <-t.C:
			return ws // unconfirmed: an event may be missed, the timers cover it
		case <-ctx.Done():
			return ws
		}
	}
	return ws
}

func (ws *waitSet) active() bool { return ws != nil && len(ws.regs) > 0 }

func (ws *waitSet) close() {
	if ws == nil {
		return
	}
	for _, r := range ws.regs {
		r.w.remove(r.channel, ws.w)
	}
}

// wait sleeps until a release event, the holder's TTL has run out,
// maxEventWait, limit (if >= 0) or the end of ctx (false).
func (ws *waitSet) wait(ctx context.Context, holderTTL, limit time.Duration) bool {
	d := maxEventWait
	if holderTTL > 0 {
		d = min(d, holderTTL+time.Millisecond)
	}
	if limit >= 0 {
		d = min(d, limit)
	}
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ws.w.wake:
		return true
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
