// The judge's harness for function problems in C++ (judge/grading/harness.h):
// this prelude, then the user's code under #line "solution.cpp", then a main
// generated per request that calls the function with literal arguments. It
// reads a nonce on stdin and writes one record per call on the real stdout,
// "\x1ejudge:NONCE {json}"; what the code prints goes apart (cout) or to
// stderr (fd 1). Expected values never come here: the host compares.
#include <bits/stdc++.h>
#include <cxxabi.h>
#include <unistd.h>
using namespace std;

namespace __judge {
static int real_fd = -1;
static std::string nonce;
static std::ostringstream captured;
static std::streambuf *cout_buf;

static void esc(std::string &o, const std::string &s) {
	o += '"';
	for (unsigned char c : s) {
		if (c == '"' || c == '\\') { o += '\\'; o += (char)c; }
		else if (c < 0x20) { char b[8]; snprintf(b, sizeof b, "\\u%04x", c); o += b; }
		else o += (char)c;
	}
	o += '"';
}
template <class T> struct is_list : std::false_type {};
template <class T, class A> struct is_list<std::vector<T, A>> : std::true_type {};
template <class T, class A> struct is_list<std::list<T, A>> : std::true_type {};
template <class T, class A> struct is_list<std::deque<T, A>> : std::true_type {};
template <class T, class C, class A> struct is_list<std::set<T, C, A>> : std::true_type {};
template <class T, class C, class A> struct is_list<std::multiset<T, C, A>> : std::true_type {};
template <class T, class H, class E, class A> struct is_list<std::unordered_set<T, H, E, A>> : std::true_type {};
template <class T, size_t N> struct is_list<std::array<T, N>> : std::true_type {};
template <class T> struct is_map : std::false_type {};
template <class K, class V, class C, class A> struct is_map<std::map<K, V, C, A>> : std::true_type {};
template <class K, class V, class H, class E, class A> struct is_map<std::unordered_map<K, V, H, E, A>> : std::true_type {};
template <class T> struct is_pair : std::false_type {};
template <class A, class B> struct is_pair<std::pair<A, B>> : std::true_type {};

template <class T> void put(std::string &o, const T &v);
template <class T> void put_key(std::string &o, const T &k) {
	if constexpr (std::is_convertible_v<T, std::string>) esc(o, k);
	else { std::string s; put(s, k); esc(o, s); }
}
template <class T> void put(std::string &o, const T &v) {
	using D = std::decay_t<T>;
	if constexpr (std::is_same_v<D, bool> || std::is_same_v<D, std::vector<bool>::reference>) o += v ? "true" : "false";
	else if constexpr (std::is_same_v<D, char>) esc(o, std::string(1, v));
	else if constexpr (std::is_integral_v<D>) o += std::to_string(v);
	else if constexpr (std::is_floating_point_v<D>) {
		if (!std::isfinite((double)v)) { o += "null"; return; }
		char b[40]; snprintf(b, sizeof b, "%.17g", (double)v); o += b;
	}
	else if constexpr (std::is_convertible_v<D, std::string>) esc(o, std::string(v));
	else if constexpr (std::is_same_v<D, std::nullptr_t>) o += "null";
	else if constexpr (is_pair<D>::value) { o += '['; put(o, v.first); o += ','; put(o, v.second); o += ']'; }
	else if constexpr (is_map<D>::value) {
		o += '{'; bool first = true;
		for (const auto &kv : v) { if (!first) o += ','; first = false; put_key(o, kv.first); o += ':'; put(o, kv.second); }
		o += '}';
	}
	else if constexpr (std::is_same_v<D, std::vector<bool>>) {
		o += '['; for (size_t i = 0; i < v.size(); i++) { if (i) o += ','; o += v[i] ? "true" : "false"; } o += ']';
	}
	else if constexpr (is_list<D>::value) {
		o += '['; bool first = true;
		for (const auto &x : v) { if (!first) o += ','; first = false; put(o, x); }
		o += ']';
	}
	else static_assert(sizeof(D) == 0, "the function returns a type the judge cannot write as JSON");
}
static void emit(const std::string &rec) {
	std::string line = "\x1ejudge:" + nonce + " " + rec + "\n";
	size_t off = 0;
	while (off < line.size()) {
		ssize_t n = ::write(real_fd, line.data() + off, line.size() - off);
		if (n <= 0) break;
		off += (size_t)n;
	}
}
static void init() {
	std::getline(std::cin, nonce);
	fflush(stdout);
	real_fd = dup(1);
	dup2(2, 1); // printf and puts go to stderr
	cout_buf = std::cout.rdbuf();
}
static std::string head(int i, bool ok, long ms) {
	std::string o = "{\"i\":" + std::to_string(i) + ",\"ok\":" + (ok ? "true" : "false") +
			 ",\"ms\":" + std::to_string(ms) + ",\"stdout\":";
	std::string out = captured.str().substr(0, 65536);
	esc(o, out);
	return o;
}
static std::string demangle(const char *n) {
	int st = 0;
	char *d = abi::__cxa_demangle(n, nullptr, nullptr, &st);
	std::string s = st == 0 && d ? d : n;
	free(d);
	return s;
}
static void fail(int i, long ms, const std::string &type, const std::string &msg) {
	std::cout.rdbuf(cout_buf);
	std::string o = head(i, false, ms) + ",\"error\":{\"type\":";
	esc(o, type);
	o += ",\"message\":";
	esc(o, msg.substr(0, 2000));
	o += ",\"line\":0}}";
	emit(o);
}
template <class F> void call(int i, F f) {
	captured.str("");
	std::cout.rdbuf(captured.rdbuf());
	auto t0 = std::chrono::steady_clock::now();
	auto ms = [&] { return (long)std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0).count(); };
	try {
		if constexpr (std::is_void_v<std::invoke_result_t<F>>) {
			f();
			std::cout.rdbuf(cout_buf);
			emit(head(i, true, ms()) + ",\"value\":null}");
		} else {
			auto r = f();
			long m = ms();
			std::cout.rdbuf(cout_buf);
			std::string o = head(i, true, m) + ",\"value\":";
			put(o, r);
			emit(o + "}");
		}
	} catch (const std::exception &e) {
		fail(i, ms(), demangle(typeid(e).name()), e.what());
	} catch (const std::string &s) {
		fail(i, ms(), "std::string", s);
	} catch (const char *s) {
		fail(i, ms(), "const char*", s);
	} catch (int x) {
		fail(i, ms(), "int", std::to_string(x));
	} catch (...) {
		fail(i, ms(), "unknown exception", "");
	}
}
static void end() { emit("{\"end\":true}"); }
} // namespace __judge
