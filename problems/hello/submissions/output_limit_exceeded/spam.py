line = "Hello World! " * 80
while True:
    print(line)
