package keyspace

import (
	"fmt"
	"testing"
)

// BenchmarkListPushPop is LPUSH then RPOP through the handle, on listpacks of 5
// and 1000 elements (inline) and on a quicklist (boxed): the redis-benchmark
// list workloads' hot path below the command layer.
func BenchmarkListPushPop(b *testing.B) {
	for _, size := range []int{5, 1000, 100000} {
		b.Run(fmt.Sprint(size), func(b *testing.B) {
			ks := New(1, 1)
			l := ks.DBs[0].SetObject([]byte("l"), KindList, (*List)(nil)).Obj().(*List)
			v := [][]byte{[]byte("xxx")}
			for range size {
				l.PushAll(ks, v, false)
			}
			b.ReportAllocs()
			for b.Loop() {
				l.PushAll(ks, v, true)
				l.Pop(false)
			}
		})
	}
}

// BenchmarkListPushLong is RPUSH (tail) and LPUSH (head) of 32-byte elements
// onto long lists (up to 200,000 elements, then a new list): the packed end
// node's growth is the cost beside the copy.
func BenchmarkListPushLong(b *testing.B) {
	v := [][]byte{[]byte("xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx")}
	for _, front := range []bool{false, true} {
		b.Run(map[bool]string{false: "tail", true: "head"}[front], func(b *testing.B) {
			ks := New(1, 1)
			var l *List
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if i%200000 == 0 {
					ks.DBs[0].Delete([]byte("l"))
					l = ks.DBs[0].SetObject([]byte("l"), KindList, (*List)(nil)).Obj().(*List)
				}
				l.PushAll(ks, v, front)
			}
		})
	}
}
