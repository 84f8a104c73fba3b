print(41)
