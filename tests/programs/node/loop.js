let n = 0;
for (;;) n++;
