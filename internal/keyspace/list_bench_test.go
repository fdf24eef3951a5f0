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
