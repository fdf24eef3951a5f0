package command

//go:generate go run ./internal/gendocs -dir .

// COMMAND DOCS data. docs_data.go is generated (go generate ./internal/command)
// from testdata/docs: Redis 7.0's COMMAND DOCS reply as captured from a
// redis-server, with the changes Redis 8.x made to each command's docs on top
// (testdata/docs/redis8.jsonl; see internal/gendocs). The data lives here, not
// in the Spec literals, so that COMMAND DOCS replies Redis's text byte for byte;
// Spec.Summary and Spec.Since should agree with it (TestDocsAgreeWithSpecs lists
// where they do not).

// ArgFlag is a flag of a command argument in COMMAND DOCS.
type ArgFlag uint8

// Argument flags, in the order COMMAND DOCS lists them.
const (
	ArgOptional ArgFlag = 1 << iota
	ArgMultiple
	ArgMultipleToken
)

// CommandDoc is one command's (or subcommand's) COMMAND DOCS entry.
type CommandDoc struct {
	Summary         string
	Since           string
	Group           string
	Complexity      string
	DocFlags        []string // "deprecated", "syscmd"
	DeprecatedSince string
	ReplacedBy      string
	History         [][2]string // version, description
	Args            []ArgDoc
}

// ArgDoc is one argument of a command in COMMAND DOCS.
type ArgDoc struct {
	Name            string
	Type            string // string, integer, double, key, pattern, unix-time, pure-token, oneof, block
	KeySpecIndex    int    // -1: none
	Token           string
	Summary         string
	Since           string
	DeprecatedSince string
	DisplayText     string // "" means Name; oneof and block arguments have none
	Flags           ArgFlag
	Args            []ArgDoc // oneof and block
}

// DocFor returns the COMMAND DOCS data of a command by its full name ("get",
// "client|list"), or nil when there is none.
func DocFor(fullName string) *CommandDoc { return docsTable[fullName] }

// DocNames lists the full names that have COMMAND DOCS data.
func DocNames() []string {
	out := make([]string, 0, len(docsTable))
	for n := range docsTable {
		out = append(out, n)
	}
	return out
}

// writeDoc writes one command's COMMAND DOCS map as Redis's
// addReplyCommandDocs does: summary, since, group, complexity, doc_flags,
// deprecated_since, replaced_by, history, arguments, subcommands, each only when
// the command has it (group always). A command without docs data falls back to
// its Spec's summary, since and group.
func writeDoc(c *Ctx, s *Spec) {
	w := c.W
	d := docsTable[s.FullName()]
	if d == nil {
		d = &CommandDoc{Summary: s.Summary, Since: s.Since, Group: s.Group}
	}
	n := 1
	for _, present := range []bool{d.Summary != "", d.Since != "", d.Complexity != "", len(d.DocFlags) > 0,
		d.DeprecatedSince != "", d.ReplacedBy != "", len(d.History) > 0, len(d.Args) > 0, len(s.Subs) > 0} {
		if present {
			n++
		}
	}
	w.MapLen(n)
	if d.Summary != "" {
		w.BulkString("summary")
		w.BulkString(d.Summary)
	}
	if d.Since != "" {
		w.BulkString("since")
		w.BulkString(d.Since)
	}
	w.BulkString("group")
	w.BulkString(d.Group)
	if d.Complexity != "" {
		w.BulkString("complexity")
		w.BulkString(d.Complexity)
	}
	if len(d.DocFlags) > 0 {
		w.BulkString("doc_flags")
		w.SetLen(len(d.DocFlags))
		for _, f := range d.DocFlags {
			w.SimpleString(f)
		}
	}
	if d.DeprecatedSince != "" {
		w.BulkString("deprecated_since")
		w.BulkString(d.DeprecatedSince)
	}
	if d.ReplacedBy != "" {
		w.BulkString("replaced_by")
		w.BulkString(d.ReplacedBy)
	}
	if len(d.History) > 0 {
		w.BulkString("history")
		w.SetLen(len(d.History)) // a set in RESP3, as Redis's addReplyCommandHistory
		for _, h := range d.History {
			w.ArrayLen(2)
			w.BulkString(h[0])
			w.BulkString(h[1])
		}
	}
	if len(d.Args) > 0 {
		w.BulkString("arguments")
		writeArgDocs(c, d.Args)
	}
	if len(s.Subs) > 0 {
		w.BulkString("subcommands")
		w.MapLen(len(s.Subs))
		for _, sub := range s.Subs {
			w.BulkString(sub.FullName())
			writeDoc(c, sub)
		}
	}
}

var argFlagNames = []struct {
	f    ArgFlag
	name string
}{{ArgOptional, "optional"}, {ArgMultiple, "multiple"}, {ArgMultipleToken, "multiple_token"}}

// writeArgDocs writes an argument list as Redis 8's addReplyCommandArgList:
// name, type, display_text (every type but oneof and block; the name unless the
// argument has its own), key_spec_index, token, summary, since,
// deprecated_since, flags, then arguments (oneof and block).
func writeArgDocs(c *Ctx, args []ArgDoc) {
	w := c.W
	w.ArrayLen(len(args))
	for i := range args {
		a := &args[i]
		container := a.Type == "oneof" || a.Type == "block"
		n := 3 // name, type, and display_text or arguments
		// a pure token always has one, empty for MIGRATE's empty-string (`""""` in Redis's C)
		hasToken := a.Token != "" || a.Type == "pure-token"
		for _, present := range []bool{a.KeySpecIndex >= 0, hasToken, a.Summary != "", a.Since != "",
			a.DeprecatedSince != "", a.Flags != 0} {
			if present {
				n++
			}
		}
		w.MapLen(n)
		w.BulkString("name")
		w.BulkString(a.Name)
		w.BulkString("type")
		w.BulkString(a.Type)
		if !container {
			w.BulkString("display_text")
			if a.DisplayText != "" {
				w.BulkString(a.DisplayText)
			} else {
				w.BulkString(a.Name)
			}
		}
		if a.KeySpecIndex >= 0 {
			w.BulkString("key_spec_index")
			w.Int(int64(a.KeySpecIndex))
		}
		if hasToken {
			w.BulkString("token")
			w.BulkString(a.Token)
		}
		if a.Summary != "" {
			w.BulkString("summary")
			w.BulkString(a.Summary)
		}
		if a.Since != "" {
			w.BulkString("since")
			w.BulkString(a.Since)
		}
		if a.DeprecatedSince != "" {
			w.BulkString("deprecated_since")
			w.BulkString(a.DeprecatedSince)
		}
		if a.Flags != 0 {
			w.BulkString("flags")
			cnt := 0
			for _, fn := range argFlagNames {
				if a.Flags&fn.f != 0 {
					cnt++
				}
			}
			w.SetLen(cnt)
			for _, fn := range argFlagNames {
				if a.Flags&fn.f != 0 {
					w.SimpleString(fn.name)
				}
			}
		}
		if container {
			w.BulkString("arguments")
			writeArgDocs(c, a.Args)
		}
	}
}
