package config

// NotifyFlags is the parsed form of notify-keyspace-events: which classes of
// keyspace events are published, and on which channels. The bit values are
// Redis's (server.h) so that they can be compared with its sources.
type NotifyFlags uint32

// The notification classes, with their notify-keyspace-events characters.
const (
	NotifyKeyspace    NotifyFlags = 1 << 0  // K: __keyspace@<db>__:<key> channels
	NotifyKeyevent    NotifyFlags = 1 << 1  // E: __keyevent@<db>__:<event> channels
	NotifyGeneric     NotifyFlags = 1 << 2  // g: DEL, EXPIRE, RENAME, ...
	NotifyString      NotifyFlags = 1 << 3  // $
	NotifyList        NotifyFlags = 1 << 4  // l
	NotifySet         NotifyFlags = 1 << 5  // s
	NotifyHash        NotifyFlags = 1 << 6  // h
	NotifyZset        NotifyFlags = 1 << 7  // z
	NotifyExpired     NotifyFlags = 1 << 8  // x
	NotifyEvicted     NotifyFlags = 1 << 9  // e
	NotifyStream      NotifyFlags = 1 << 10 // t
	NotifyKeyMiss     NotifyFlags = 1 << 11 // m (not part of A)
	NotifyModule      NotifyFlags = 1 << 13 // d
	NotifyNew         NotifyFlags = 1 << 14 // n (not part of A)
	NotifyOverwritten NotifyFlags = 1 << 15 // o (not part of A; Redis 8.2)
	NotifyTypeChanged NotifyFlags = 1 << 16 // c (not part of A; Redis 8.2)

	// NotifyAll is what 'A' stands for: g$lshzxetd.
	NotifyAll = NotifyGeneric | NotifyString | NotifyList | NotifySet | NotifyHash |
		NotifyZset | NotifyExpired | NotifyEvicted | NotifyStream | NotifyModule
)

// errNotifyClass is Redis's error for a character that names no class.
const errNotifyClass = "Invalid event class character. Use 'Ag$lshzxeKEtmdnoc'."

// ParseNotifyFlags is keyspaceEventsStringToFlags: each character of s adds a
// class; ok is false if a character names no class. The empty string is valid
// (notifications off). As in Redis, s is read only up to a NUL byte.
func ParseNotifyFlags(s string) (f NotifyFlags, ok bool) {
	for _, c := range []byte(cstr(s)) {
		switch c {
		case 'A':
			f |= NotifyAll
		case 'g':
			f |= NotifyGeneric
		case '$':
			f |= NotifyString
		case 'l':
			f |= NotifyList
		case 's':
			f |= NotifySet
		case 'h':
			f |= NotifyHash
		case 'z':
			f |= NotifyZset
		case 'x':
			f |= NotifyExpired
		case 'e':
			f |= NotifyEvicted
		case 'K':
			f |= NotifyKeyspace
		case 'E':
			f |= NotifyKeyevent
		case 't':
			f |= NotifyStream
		case 'm':
			f |= NotifyKeyMiss
		case 'd':
			f |= NotifyModule
		case 'n':
			f |= NotifyNew
		case 'o':
			f |= NotifyOverwritten
		case 'c':
			f |= NotifyTypeChanged
		default:
			return 0, false
		}
	}
	return f, true
}

// String is keyspaceEventsFlagsToString, the canonical form CONFIG GET prints:
// "A" when every class of A is set, else the classes in the order g$lshzxetdnoc,
// then K, E and m. For example "KEA" prints "AKE" and "Elg" prints "glE".
// As in Redis, n, o and c are not printed when A is (so "AKEn" prints "AKE"
// although the n class stays enabled; CONFIG REWRITE loses it the same way).
func (f NotifyFlags) String() string {
	var b []byte
	if f&NotifyAll == NotifyAll {
		b = append(b, 'A')
	} else {
		for _, x := range [...]struct {
			bit NotifyFlags
			c   byte
		}{
			{NotifyGeneric, 'g'}, {NotifyString, '$'}, {NotifyList, 'l'},
			{NotifySet, 's'}, {NotifyHash, 'h'}, {NotifyZset, 'z'},
			{NotifyExpired, 'x'}, {NotifyEvicted, 'e'}, {NotifyStream, 't'},
			{NotifyModule, 'd'}, {NotifyNew, 'n'}, {NotifyOverwritten, 'o'},
			{NotifyTypeChanged, 'c'},
		} {
			if f&x.bit != 0 {
				b = append(b, x.c)
			}
		}
	}
	if f&NotifyKeyspace != 0 {
		b = append(b, 'K')
	}
	if f&NotifyKeyevent != 0 {
		b = append(b, 'E')
	}
	if f&NotifyKeyMiss != 0 {
		b = append(b, 'm')
	}
	return string(b)
}
