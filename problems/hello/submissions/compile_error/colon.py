# a missing colon: Python byte-compiles the source first, so this never runs
if True
    print("Hello World!")
