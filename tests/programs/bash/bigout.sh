# prints 100 MB, then spins: a judge that waits for the end times out instead
line=$(printf '%01023d' 0)
yes "$line" | head -c 104857600
while :; do :; done
