long answer(long n);
