// Status and Result<T>: how Denpex libraries report expected failures (bad input, missing
// files). Exceptions are used only at process edges (flag parsing, main).
#pragma once

#include <string>
#include <utility>
#include <variant>

namespace denpex {

enum class StatusCode {
  kOk = 0,
  kInvalidArgument,  // usage error: flags, options
  kInvalidInput,     // unreadable, malformed or semantically invalid input file
  kNotFound,
  kIoError,
  kInternal,
};

class [[nodiscard]] Status {
 public:
  Status() = default;
  static Status Ok() { return {}; }
  static Status InvalidArgument(std::string msg) { return {StatusCode::kInvalidArgument, std::move(msg)}; }
  static Status InvalidInput(std::string msg) { return {StatusCode::kInvalidInput, std::move(msg)}; }
  static Status NotFound(std::string msg) { return {StatusCode::kNotFound, std::move(msg)}; }
  static Status IoError(std::string msg) { return {StatusCode::kIoError, std::move(msg)}; }
  static Status Internal(std::string msg) { return {StatusCode::kInternal, std::move(msg)}; }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }

 private:
  Status(StatusCode code, std::string msg) : code_(code), message_(std::move(msg)) {}
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

// A value or the Status that explains why there is none.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}           // NOLINT: implicit by design
  Result(Status status) : v_(std::move(status)) {}    // NOLINT: implicit by design

  bool ok() const { return std::holds_alternative<T>(v_); }
  const Status& status() const {
    static const Status kOk;
    return ok() ? kOk : std::get<Status>(v_);
  }
  T& value() & { return std::get<T>(v_); }
  const T& value() const& { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

 private:
  std::variant<T, Status> v_;
};

// Process exit codes shared by every subcommand (documented in `denpex --help`).
inline constexpr int kExitOk = 0;
inline constexpr int kExitUsage = 2;
inline constexpr int kExitBadInput = 3;
inline constexpr int kExitInternal = 1;

inline int ExitCodeFor(const Status& s) {
  switch (s.code()) {
    case StatusCode::kOk: return kExitOk;
    case StatusCode::kInvalidArgument: return kExitUsage;
    case StatusCode::kInvalidInput:
    case StatusCode::kNotFound:
    case StatusCode::kIoError: return kExitBadInput;
    case StatusCode::kInternal: return kExitInternal;
  }
  return kExitInternal;
}

}  // namespace denpex

// Returns early from the enclosing function when `expr` yields a non-OK Status.
#define DENPEX_RETURN_IF_ERROR(expr)          \
  do {                                        \
    ::denpex::Status denpex_status_ = (expr); \
    if (!denpex_status_.ok()) return denpex_status_; \
  } while (0)
