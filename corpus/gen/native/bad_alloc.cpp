// grows a feature cache until allocation fails; exception not caught
#include <cstdio>
#include <vector>
int main() {
    std::vector<std::vector<double>> cache;
    for (int i = 0;; i++) {
        cache.emplace_back(size_t(32) << 20);
        if (i % 8 == 0) { std::printf("feature cache: %d blocks\n", i); std::fflush(stdout); }
    }
}
