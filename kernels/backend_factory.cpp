#include "kernels/backend_factory.h"

#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>
#include <mutex>
#include <stdexcept>
#include <vector>

#include "kernels/cuda/cuda_entry.h"

namespace pagedchat::kernels {

namespace {

constexpr const char* kCudaLibrary = "libpagedchat_cuda.so";

// The library's entry points once loaded (the handle is never closed: backends made by it
// live in it).
struct CudaLibrary {
  bool loaded = false;
  std::string error;  // why not, when !loaded
  decltype(&pagedchat_cuda_device_count) device_count = nullptr;
  decltype(&pagedchat_cuda_create_backend) create = nullptr;
};

std::string executable_dir() {
  std::vector<char> buf(4096);
  const ssize_t n = ::readlink("/proc/self/exe", buf.data(), buf.size() - 1);
  if (n <= 0) return {};
  std::string path(buf.data(), std::size_t(n));
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? std::string() : path.substr(0, slash);
}

// Where the library may be: $PAGEDCHAT_CUDA_LIBRARY, beside the executable, the install layout
// (<prefix>/bin/.. /lib/.../pagedchat), the build tree, then the dynamic loader's own search.
std::vector<std::string> library_candidates() {
  std::vector<std::string> c;
  if (const char* env = std::getenv("PAGEDCHAT_CUDA_LIBRARY"); env && *env) return {env};
  const std::string dir = executable_dir();
  if (!dir.empty()) {
    c.push_back(dir + "/" + kCudaLibrary);
#ifdef PAGEDCHAT_CUDA_LIBRARY_RELPATH
    c.push_back(dir + "/" + PAGEDCHAT_CUDA_LIBRARY_RELPATH);
#endif
  }
#ifdef PAGEDCHAT_CUDA_LIBRARY_PATH
  c.push_back(PAGEDCHAT_CUDA_LIBRARY_PATH);
#endif
  c.push_back(kCudaLibrary);
  return c;
}

CudaLibrary load_cuda_library() {
  CudaLibrary lib;
#ifndef PAGEDCHAT_HAVE_CUDA
  if (!std::getenv("PAGEDCHAT_CUDA_LIBRARY")) {
    lib.error = "this build of PagedChat has no CUDA backend (nvcc was not found when it was configured)";
    return lib;
  }
#endif
  std::string tried;
  void* handle = nullptr;
  for (const std::string& path : library_candidates()) {
    // A path that exists but fails to load (a missing libcudart) is the error to report.
    const bool is_path = path.find('/') != std::string::npos;
    if (is_path && ::access(path.c_str(), F_OK) != 0) {
      if (std::getenv("PAGEDCHAT_CUDA_LIBRARY")) tried = path + ": no such file";
      continue;
    }
    handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle) break;
    const char* e = ::dlerror();
    tried = e ? e : path + ": cannot be loaded";
    if (is_path) break;
  }
  if (!handle) {
    lib.error = "the CUDA backend library " + std::string(kCudaLibrary) + " could not be loaded (" +
                (tried.empty() ? std::string("not found") : tried) +
                "; set PAGEDCHAT_CUDA_LIBRARY to its path, or check that the CUDA runtime and cuBLAS are installed)";
    return lib;
  }
  auto abi = reinterpret_cast<decltype(&pagedchat_cuda_abi)>(::dlsym(handle, "pagedchat_cuda_abi"));
  lib.device_count = reinterpret_cast<decltype(&pagedchat_cuda_device_count)>(
      ::dlsym(handle, "pagedchat_cuda_device_count"));
  lib.create = reinterpret_cast<decltype(&pagedchat_cuda_create_backend)>(
      ::dlsym(handle, "pagedchat_cuda_create_backend"));
  if (!abi || !lib.device_count || !lib.create) {
    lib.error = std::string(kCudaLibrary) + " lacks the PagedChat entry points (not this project's library?)";
    return lib;
  }
#ifdef PAGEDCHAT_OPS_ABI
  if (std::string(abi()) != PAGEDCHAT_OPS_ABI) {
    lib.error = std::string(kCudaLibrary) + " was built from another version of kernels/ops.h (" + abi() +
                ", this program " + PAGEDCHAT_OPS_ABI + "); rebuild it with this program";
    return lib;
  }
#endif
  lib.loaded = true;
  return lib;
}

const CudaLibrary& cuda_library() {
  static std::once_flag once;
  static CudaLibrary lib;
  std::call_once(once, [] { lib = load_cuda_library(); });
  return lib;
}

std::unique_ptr<Backend> make_cuda_backend(int index, const BackendOptions& o) {
  std::string why;
  const int n = cuda_device_count(&why);
  if (n == 0) throw std::runtime_error("device " + o.device + " is not available: " + why);
  if (index >= n)
    throw std::runtime_error("device cuda:" + std::to_string(index) + " does not exist: " + std::to_string(n) +
                             " CUDA device(s), cuda:0 to cuda:" + std::to_string(n - 1));
  char error[512] = {};
  Backend* b = cuda_library().create(index, o.num_threads, o.enforce_eager ? 1 : 0, error, sizeof error);
  if (!b) throw std::runtime_error("device cuda:" + std::to_string(index) + " could not be started: " + error);
  return std::unique_ptr<Backend>(b);
}

}  // namespace

DeviceSpec parse_device(const std::string& d) {
  DeviceSpec s;
  if (d == "cpu") return s;
  if (d == "auto") {
    s.kind = DeviceSpec::Kind::kAuto;
    return s;
  }
  if (d == "cuda") {
    s.kind = DeviceSpec::Kind::kCuda;
    return s;
  }
  if (d.rfind("cuda:", 0) == 0 && d.size() > 5 && d.size() <= 8 &&
      d.find_first_not_of("0123456789", 5) == std::string::npos) {
    s.kind = DeviceSpec::Kind::kCuda;
    s.index = std::stoi(d.substr(5));
    return s;
  }
  throw std::invalid_argument("device must be \"cpu\", \"cuda\", \"cuda:N\" (N = 0, 1, ...) or \"auto\", got \"" + d +
                              "\"");
}

int cuda_device_count(std::string* why) {
  const CudaLibrary& lib = cuda_library();
  if (!lib.loaded) {
    if (why) *why = lib.error;
    return 0;
  }
  char buf[512] = {};
  const int n = lib.device_count(buf, sizeof buf);
  if (why) *why = n > 0 ? std::string() : std::string(buf);
  return n;
}

std::unique_ptr<Backend> make_backend(const BackendOptions& o, std::string* note) {
  const DeviceSpec spec = parse_device(o.device);
  if (note) note->clear();
  switch (spec.kind) {
    case DeviceSpec::Kind::kCpu:
      return make_cpu_backend(o.num_threads);
    case DeviceSpec::Kind::kCuda:
      return make_cuda_backend(spec.index, o);
    case DeviceSpec::Kind::kAuto:
      break;
  }
  std::string why;
  if (cuda_device_count(&why) > 0) {
    try {
      auto b = make_cuda_backend(0, o);
      if (note) *note = "device auto: " + b->description();
      return b;
    } catch (const std::exception& e) {
      why = e.what();
    }
  }
  auto b = make_cpu_backend(o.num_threads);
  if (note) *note = "device auto: " + b->description() + " (no CUDA: " + why + ")";
  return b;
}

}  // namespace pagedchat::kernels
