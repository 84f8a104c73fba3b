/* connect_loopback: reads a port on stdin and connects to the host's 127.0.0.1:port;
 * prints LEAK when it gets through. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

int main(void)
{
	int port = 0;
	if (scanf("%d", &port) != 1)
		return 2;
	int s = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a;
	memset(&a, 0, sizeof a);
	a.sin_family = AF_INET;
	a.sin_port = htons((unsigned short)port);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (s >= 0 && connect(s, (struct sockaddr *)&a, sizeof a) == 0)
		puts("LEAK connected to the host");
	else
		puts("blocked");
	return 0;
}
