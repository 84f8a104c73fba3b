n=0
while :; do n=$((n + 1)); done
