long n = 0;
while (true)
    n++;
