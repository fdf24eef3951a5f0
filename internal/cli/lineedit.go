package cli

import (
	"errors"
	"io"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/chzyer/readline"
)

// historyPath is ~/.hotkv_history, or $HOTKVCLI_HISTFILE ("/dev/null" turns
// the file off), as redis-cli's getDotfilePath.
func historyPath(getenv func(string) string) string {
	if p := getenv("HOTKVCLI_HISTFILE"); p != "" {
		if p == "/dev/null" {
			return ""
		}
		return p
	}
	if home := getenv("HOME"); home != "" {
		return filepath.Join(home, ".hotkv_history")
	}
	return ""
}

// completer offers command names (and groups after "help ") on TAB.
type completer struct{ s *session }

func (c completer) Do(line []rune, pos int) ([][]rune, int) {
	if pos != len(line) {
		return nil, 0
	}
	typed := string(line)
	start := strings.LastIndexByte(typed, ' ') + 1
	var out [][]rune
	for _, cand := range c.s.help.Load().Complete(typed) {
		if len(cand) >= len(typed) {
			out = append(out, []rune(cand[len(typed):]))
		}
	}
	return out, len([]rune(typed[start:]))
}

// hintPainter shows the inline argument hint after the typed text, in grey,
// and puts the cursor back (linenoise's hints, on readline's Painter).
type hintPainter struct {
	s      *session
	prompt *string
	width  func() int
}

func (p hintPainter) Paint(line []rune, pos int) []rune {
	h := p.s.help.Load()
	if !p.s.hints.Load() || h == nil || (len(line) > 0 && line[len(line)-1] == '\n') {
		return line
	}
	hint, ok := h.Hint(string(line))
	if !ok || strings.TrimSpace(hint) == "" {
		return line
	}
	// Keep the hint on the current row: readline does not know its width.
	avail := p.width() - len([]rune(*p.prompt)) - readline.Runes{}.WidthAll(line) - 1
	if avail <= 0 {
		return line
	}
	if len(hint) > avail {
		hint = hint[:avail]
	}
	out := make([]rune, 0, len(line)+len(hint)+24)
	out = append(out, line...)
	out = append(out, []rune("\x1b[0;90;49m"+hint+"\x1b[0m\x1b["+strconv.Itoa(len(hint))+"D")...)
	return out
}

// interactiveMode is the shell on a terminal: line editing, history in
// ~/.hotkv_history, completion and hints from COMMAND DOCS.
func (s *session) interactiveMode() error {
	s.interactive = true
	if s.getConn() != nil {
		s.loadHelp()
	}
	stop := s.interruptHandler()
	defer stop()

	promptText := s.Prompt()
	width := func() int {
		if w := readline.GetScreenWidth(); w > 0 {
			return w
		}
		return 80
	}
	rl, err := readline.NewEx(&readline.Config{
		Prompt:                 promptText,
		HistoryFile:            historyPath(s.env.Getenv),
		DisableAutoSaveHistory: true,
		HistoryLimit:           1000,
		AutoComplete:           completer{s},
		Painter:                hintPainter{s: s, prompt: &promptText, width: width},
		FuncGetWidth:           width,
	})
	if err != nil {
		return err
	}
	defer rl.Close()
	for {
		promptText = s.Prompt()
		rl.SetPrompt(promptText)
		line, err := rl.Readline()
		if err != nil {
			// Ctrl-C or Ctrl-D: leave, as redis-cli does when linenoise
			// returns NULL.
			if errors.Is(err, readline.ErrInterrupt) || errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		res := s.runLine(line, func(l string) { _ = rl.SaveHistory(l) })
		if res == lineQuit {
			return nil
		}
	}
}
