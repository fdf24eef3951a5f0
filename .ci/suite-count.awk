# suite-count.awk LOG: counts one unit's results in a log of Redis's Tcl test
# suite and prints "passed failed exceptions": passed = "[ok]" lines; failed =
# "[err]" reports that are assertion failures; exceptions = "[err]" reports
# carrying a Tcl error trace (an unexpected error reply, a dropped
# connection...), "[exception]" (the unit aborted) and "[TIMEOUT]".
function flush() { if (inerr) { if (exc) e++; else f++ } inerr = 0; exc = 0 }
/^ *The End *$/        { flush(); stop = 1 }
stop                   { next }
/^\[ok\]: /            { flush(); p++; next }
/^\[err\]: /           { flush(); inerr = 1; exc = 0; next }
/^\[exception\]: /     { flush(); x++; next }
/^\[TIMEOUT\]/         { flush(); x++; next }
/^\[[^]]*\]: /         { flush(); next }
/^Testing /            { flush(); next }
inerr && (/while executing/ || /invoked from within/) { exc = 1 }
END { flush(); printf "%d %d %d\n", p, f, e + x }
