#include "store/redis_client.hpp"

#include <hiredis/hiredis.h>
#include <signal.h>
#include <sys/time.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <mutex>

#include "core/log.hpp"

namespace refenc::store {
namespace {

using Clock = std::chrono::steady_clock;

timeval to_timeval(std::chrono::milliseconds ms) {
  const auto n = std::max<std::int64_t>(ms.count(), 1);
  return {static_cast<time_t>(n / 1000), static_cast<suseconds_t>((n % 1000) * 1000)};
}

RedisReply copy_reply(const redisReply* r) {
  RedisReply out;
  switch (r->type) {
    case REDIS_REPLY_STRING: out.type = RedisReply::Type::string; break;
    case REDIS_REPLY_STATUS: out.type = RedisReply::Type::status; break;
    case REDIS_REPLY_ERROR: out.type = RedisReply::Type::error; break;
    case REDIS_REPLY_INTEGER: out.type = RedisReply::Type::integer; break;
    case REDIS_REPLY_ARRAY: out.type = RedisReply::Type::array; break;
    default: out.type = RedisReply::Type::nil; break;
  }
  if (r->type == REDIS_REPLY_STRING || r->type == REDIS_REPLY_STATUS || r->type == REDIS_REPLY_ERROR)
    out.str.assign(r->str, r->len);
  if (r->type == REDIS_REPLY_INTEGER) out.integer = r->integer;
  if (r->type == REDIS_REPLY_ARRAY)
    for (std::size_t i = 0; i < r->elements; ++i) out.elements.push_back(copy_reply(r->element[i]));
  return out;
}

/// Blocks SIGPIPE in this thread while alive, and swallows one raised meanwhile: hiredis writes with
/// write(2), and a write to a connection the server reset would otherwise kill the process.
class SigpipeGuard {
 public:
  SigpipeGuard() {
    sigemptyset(&pipe_);
    sigaddset(&pipe_, SIGPIPE);
    sigset_t pending;
    sigemptyset(&pending);
    sigpending(&pending);
    was_pending_ = sigismember(&pending, SIGPIPE) == 1;
    blocked_ = pthread_sigmask(SIG_BLOCK, &pipe_, &old_) == 0;
  }
  ~SigpipeGuard() {
    if (!blocked_) return;
    if (!was_pending_) {
      sigset_t pending;
      sigemptyset(&pending);
      sigpending(&pending);
      if (sigismember(&pending, SIGPIPE) == 1) {
        const timespec zero{0, 0};
        sigtimedwait(&pipe_, nullptr, &zero);
      }
    }
    pthread_sigmask(SIG_SETMASK, &old_, nullptr);
  }
  SigpipeGuard(const SigpipeGuard&) = delete;
  SigpipeGuard& operator=(const SigpipeGuard&) = delete;

 private:
  sigset_t pipe_, old_;
  bool was_pending_ = false;
  bool blocked_ = false;
};

struct ReplyDeleter {
  void operator()(void* r) const { freeReplyObject(r); }
};
using ReplyPtr = std::unique_ptr<void, ReplyDeleter>;

/// The first word of an error reply ("WRONGPASS", "NOAUTH", "ERR"): never the rest, which may echo input.
std::string error_word(const std::string& text) { return text.substr(0, text.find(' ')); }

}  // namespace

struct RedisClient::Impl {
  RedisClientOptions options;

  std::mutex pool_mutex;
  std::condition_variable pool_cv;
  std::vector<redisContext*> idle;
  std::size_t open = 0;  // idle + in use

  enum class State { closed, open, half_open };
  mutable std::mutex state_mutex;
  State state = State::closed;
  Clock::time_point open_until{};
  std::chrono::milliseconds backoff{0};
  std::string failure;

  std::atomic<std::uint64_t> commands{0}, failures{0}, skipped{0}, circuit_opens{0};

  explicit Impl(RedisClientOptions o) : options(std::move(o)) {}
  ~Impl() {
    for (redisContext* c : idle) redisFree(c);
  }

  /// Whether this call may use the network now; a call that ends the open period becomes the probe.
  bool admit() {
    std::lock_guard lock(state_mutex);
    if (state == State::closed) return true;
    if (state == State::half_open) return false;  // one probe at a time
    if (Clock::now() < open_until) return false;
    state = State::half_open;
    return true;
  }

  void succeeded() {
    std::lock_guard lock(state_mutex);
    // Only the probe closes an open circuit: a late reply to a command sent before it opened proves little.
    if (state != State::half_open) return;
    state = State::closed;
    backoff = std::chrono::milliseconds(0);
    log::info(options.label + " " + options.endpoint.display() + " is reachable again");
  }

  void failed(const std::string& why) {
    ++failures;
    std::lock_guard lock(state_mutex);
    if (state == State::open) return;  // a command sent before the circuit opened: already counted as down
    const bool was_closed = state == State::closed;
    backoff = was_closed ? options.backoff_initial : std::min(backoff * 2, options.backoff_max);
    state = State::open;
    open_until = Clock::now() + backoff;
    failure = why;
    if (was_closed) {
      ++circuit_opens;
      log::warn(options.label + " " + options.endpoint.display() + " unavailable (" + why +
                "): going on with the local tiers, retrying with backoff");
    }
  }

  /// A connection from the pool, or a new one; null when none could be had (reason in `why`).
  redisContext* acquire(std::string& why, bool& skipped_for_capacity) {
    std::unique_lock lock(pool_mutex);
    const auto deadline = Clock::now() + options.command_timeout;
    while (idle.empty() && open >= options.max_connections) {
      if (pool_cv.wait_until(lock, deadline) == std::cv_status::timeout && idle.empty() &&
          open >= options.max_connections) {
        skipped_for_capacity = true;
        return nullptr;
      }
    }
    if (!idle.empty()) {
      redisContext* c = idle.back();
      idle.pop_back();
      return c;
    }
    ++open;
    lock.unlock();
    redisContext* c = connect(why);
    if (!c) {
      lock.lock();
      --open;
      pool_cv.notify_one();
    }
    return c;
  }

  void release(redisContext* c, bool healthy) {
    {
      std::lock_guard lock(pool_mutex);
      if (healthy) {
        idle.push_back(c);
      } else {
        --open;
      }
    }
    if (!healthy) redisFree(c);
    pool_cv.notify_one();
  }

  std::size_t open_connections(std::size_t n) {
    n = std::min(n, options.max_connections);
    std::vector<redisContext*> opened;
    for (;;) {
      {
        std::lock_guard lock(pool_mutex);
        if (open >= n) break;
        ++open;
      }
      std::string why;
      redisContext* c = admit() ? connect(why) : nullptr;
      if (!c) {
        {
          std::lock_guard lock(pool_mutex);
          --open;
        }
        if (!why.empty()) failed(why);
        break;
      }
      opened.push_back(c);
    }
    for (redisContext* c : opened) release(c, true);
    if (!opened.empty()) succeeded();
    std::lock_guard lock(pool_mutex);
    return open;
  }

  void drop_idle() {
    std::vector<redisContext*> dead;
    {
      std::lock_guard lock(pool_mutex);
      dead.swap(idle);
      open -= dead.size();
    }
    for (redisContext* c : dead) redisFree(c);
    pool_cv.notify_all();
  }

  redisContext* connect(std::string& why) {
    const RedisEndpoint& e = options.endpoint;
    redisContext* c = redisConnectWithTimeout(e.host.c_str(), e.port, to_timeval(options.connect_timeout));
    if (!c) {
      why = "cannot allocate a connection";
      return nullptr;
    }
    if (c->err) {
      why = std::string("connect: ") + c->errstr;
      redisFree(c);
      return nullptr;
    }
    redisSetTimeout(c, to_timeval(options.command_timeout));
    redisEnableKeepAlive(c);
    auto run = [&](std::vector<std::string_view> args, const char* what) -> bool {
      std::optional<RedisReply> r = send(c, args, why);
      if (!r) return false;
      if (r->type == RedisReply::Type::error) {
        why = std::string(what) + " refused: " + error_word(r->str);
        return false;
      }
      return true;
    };
    bool ok = true;
    if (!e.password.empty()) {
      ok = e.user.empty() ? run({"AUTH", e.password}, "authentication")
                          : run({"AUTH", e.user, e.password}, "authentication");
    }
    if (ok && e.db != 0) {
      const std::string db = std::to_string(e.db);
      ok = run({"SELECT", db}, "SELECT");
    }
    if (!ok) {
      redisFree(c);
      return nullptr;
    }
    return c;
  }

  /// One command on `c`; nullopt (and `why`) when the connection failed or timed out.
  static std::optional<RedisReply> send(redisContext* c, const std::vector<std::string_view>& args, std::string& why) {
    std::vector<const char*> argv;
    std::vector<std::size_t> lens;
    argv.reserve(args.size());
    lens.reserve(args.size());
    for (std::string_view a : args) {
      argv.push_back(a.data());
      lens.push_back(a.size());
    }
    SigpipeGuard guard;
    ReplyPtr reply(redisCommandArgv(c, static_cast<int>(argv.size()), argv.data(), lens.data()));
    if (!reply || c->err) {
      why = c->err == REDIS_ERR_IO && (errno == EAGAIN || errno == EWOULDBLOCK || errno == ETIMEDOUT)
                ? "timed out"
                : std::string(c->errstr[0] ? c->errstr : "connection lost");
      return std::nullopt;
    }
    return copy_reply(static_cast<const redisReply*>(reply.get()));
  }

  std::optional<RedisReply> run(const std::vector<std::string_view>& args) noexcept {
    try {
      if (!admit()) {
        ++skipped;
        return std::nullopt;
      }
      std::string why;
      bool capacity = false;
      redisContext* c = acquire(why, capacity);
      if (!c) {
        if (capacity) {
          ++skipped;
          // A probe that could not even get a connection leaves the circuit as it found it.
          std::lock_guard lock(state_mutex);
          if (state == State::half_open) state = State::open;
          return std::nullopt;
        }
        failed(why);
        return std::nullopt;
      }
      std::optional<RedisReply> r = send(c, args, why);
      release(c, r.has_value());
      if (!r) {
        drop_idle();  // connections opened before the failure are likely dead too
        failed(why);
        return std::nullopt;
      }
      ++commands;
      succeeded();
      return r;
    } catch (...) {
      ++failures;
      return std::nullopt;
    }
  }
};

RedisClient::RedisClient(RedisClientOptions options) : impl_(std::make_unique<Impl>(std::move(options))) {}

std::size_t RedisClient::open_connections(std::size_t n) noexcept {
  try {
    return impl_->open_connections(n);
  } catch (...) {
    return 0;
  }
}
RedisClient::~RedisClient() = default;

std::optional<RedisReply> RedisClient::command(std::initializer_list<std::string_view> args) noexcept {
  try {
    return impl_->run(std::vector<std::string_view>(args));
  } catch (...) {
    return std::nullopt;
  }
}

std::optional<RedisReply> RedisClient::command(const std::vector<std::string_view>& args) noexcept {
  return impl_->run(args);
}

bool RedisClient::available() const noexcept {
  std::lock_guard lock(impl_->state_mutex);
  return impl_->state == Impl::State::closed;
}

std::string RedisClient::last_failure() const {
  std::lock_guard lock(impl_->state_mutex);
  return impl_->failure;
}

RedisClientStats RedisClient::stats() const noexcept {
  return {impl_->commands.load(), impl_->failures.load(), impl_->skipped.load(), impl_->circuit_opens.load()};
}

const RedisClientOptions& RedisClient::options() const noexcept { return impl_->options; }

}  // namespace refenc::store
