# a string that doubles until the memory limit ends it
s=xxxxxxxxxxxxxxxx
while :; do s=$s$s; done
