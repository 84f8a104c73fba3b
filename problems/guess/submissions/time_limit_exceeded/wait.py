# Waits for a reply before its first guess: both sides wait, the wall limit ends it.
input()
