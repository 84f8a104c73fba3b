/* thread_bomb: creates threads until refused; prints how many it got. */
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

static void *sleeper(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

int main(void)
{
	int n = 0;
	pthread_attr_t a;
	pthread_attr_init(&a);
	pthread_attr_setstacksize(&a, 65536);
	for (int i = 0; i < 100000; i++) {
		pthread_t t;
		if (pthread_create(&t, &a, sleeper, NULL) != 0)
			break;
		n++;
	}
	printf("threads %d\n", n);
	fflush(stdout);
	_exit(0);
}
