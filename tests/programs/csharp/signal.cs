// Environment.FailFast aborts the process: it dies by SIGABRT
Environment.FailFast("crashing on purpose");
