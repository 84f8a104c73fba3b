# keeps ever more memory, 16 MB at a time, each byte written
keep = []
while True:
    keep.append(b"\x01" * (16 << 20))
