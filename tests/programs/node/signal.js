// process.abort() ends the process by SIGABRT
process.abort();
