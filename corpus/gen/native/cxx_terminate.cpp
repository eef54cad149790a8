// tokenizer service throws from a worker thread; nobody catches it
#include <cstdio>
#include <stdexcept>
#include <thread>
int main() {
    std::printf("tokenizer: starting 2 threads\n"); std::fflush(stdout);
    std::thread t([] { throw std::runtime_error("vocab entry 31999 has invalid byte sequence"); });
    t.join();
}
