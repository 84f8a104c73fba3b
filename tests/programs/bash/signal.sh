# dies by SIGSEGV: bash sends it to itself and has no handler for it
kill -SEGV $$
