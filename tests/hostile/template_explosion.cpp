// template_explosion: a parameter pack that doubles at each of 40 levels.
template <class... T> struct L {};
template <int N, class... T> struct E {
	using type = typename E<N - 1, T..., T...>::type;
};
template <class... T> struct E<0, T...> {
	using type = L<T...>;
};
using X = E<40, int>::type;
X x;
int main() { return 0; }
