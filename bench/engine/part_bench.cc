// part_bench FILE [--from-end BYTES] [--length BYTES] [--repeat K] [--chunk BYTES]
// The parse of one file's byte range in memory, on one thread: the range (by default the file's
// last 260 MB, where a failed job's log is dense with errors) is copied into memory first, so
// neither mapping nor page faults count, then parsed in chunks as LoadIncident parses a file
// (ParseLogPart per chunk, merged in order) K times. --length keeps only the range's first BYTES
// (--from-end SIZE --length N: the file's first N bytes). Prints the best thread CPU time of the
// chunk parses and of the merge. A benchmark, not a test.
#include <fcntl.h>
#include <oneapi/tbb/global_control.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>

#include "denpex/engine/engine.h"
#include "ingest/chunks.h"
#include "parse/parse_log.h"

namespace {

double ThreadCpu() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + t.tv_nsec / 1e9;
}

}  // namespace

int main(int argc, char** argv) {
  denpex::engine::KeepFreedMemory();  // as the denpex binary does
  if (argc < 2) {
    std::fprintf(stderr, "usage: part_bench FILE [--from-end BYTES] [--length BYTES] [--repeat K] [--chunk BYTES]\n");
    return 2;
  }
  std::size_t from_end = 260u << 20, chunk = 32u << 20, length = ~std::size_t{0};
  int repeat = 5;
  for (int i = 2; i + 1 < argc; ++i) {
    if (!std::strcmp(argv[i], "--from-end")) from_end = std::strtoull(argv[++i], nullptr, 10);
    else if (!std::strcmp(argv[i], "--repeat")) repeat = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--chunk")) chunk = std::strtoull(argv[++i], nullptr, 10);
    else if (!std::strcmp(argv[i], "--length")) length = std::strtoull(argv[++i], nullptr, 10);
  }
  const int fd = open(argv[1], O_RDONLY);
  struct stat st{};
  if (fd < 0 || fstat(fd, &st) != 0) return 3;
  const std::size_t size = static_cast<std::size_t>(st.st_size);
  const char* map = static_cast<const char*>(mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0));
  if (map == MAP_FAILED) return 3;
  const std::string_view whole(map, size);
  std::size_t begin = size > from_end ? size - from_end : 0;
  if (begin > 0) begin = whole.find('\n', begin) + 1;
  const std::string copy(whole.substr(begin, length));
  const std::string head(whole.substr(0, std::min<std::size_t>(size, 1 << 20)));
  munmap(const_cast<char*>(map), size);
  close(fd);

  using namespace denpex::engine;
  tbb::global_control one(tbb::global_control::max_allowed_parallelism, 1);
  const FileContext ctx{.file = 0, .prefixes = SniffPrefixes(head)};
  double best_parse = 1e9, best_all = 1e9;
  std::size_t events = 0;
  for (int k = 0; k < repeat; ++k) {
    double parse = 0;
    for (std::size_t at = 0; at < copy.size(); at += chunk) {
      const std::string_view part = std::string_view(copy).substr(at, chunk);
      const double c0 = ThreadCpu();
      ParsedLog log = ParseLogPart(part, ctx, 1, begin + at);
      parse += ThreadCpu() - c0;
    }
    best_parse = std::min(best_parse, parse);
    const double c0 = ThreadCpu();
    ParsedLog all = ParseChunked(copy, ctx, chunk);
    best_all = std::min(best_all, ThreadCpu() - c0);
    events = all.events.size();
  }
  std::printf("%zu bytes, %zu events: parts %.4f CPU-s (%.2f GB/s), chunked parse + merge %.4f CPU-s\n", copy.size(),
              events, best_parse, copy.size() / best_parse / 1e9, best_all);
  return 0;
}
