// What a node's health epilogue appends to <host>/nvidia-smi.log after the default table
// (docs/log_formats.md "gpu_health"): `nvidia-smi -L` (realism.gpu_order UUID), `nvidia-smi
// -q` (realism.nvidia_smi_query: ECC, retired pages, remapped rows, temperature, clocks
// event / throttle reasons by driver era, power) and DCGM (realism.dcgm: `dcgmi health -c`,
// `dcgmi diag -r 1`, dcgm-exporter metrics). Not a hot path: one block per node at the end.
#include "formatter.h"

namespace denpex::sim {

namespace {

constexpr std::string_view kProduct = "NVIDIA H100 80GB HBM3";

// `00000000:5D:00.0`, as nvidia-smi and DCGM print a bus id.
void SmiBusId(LineBuilder& out, int gpu) {
  out.Str("00000000:");
  for (char c : NcclBusId(gpu).substr(0, 2)) out.Char(c >= 'a' ? static_cast<char>(c - 'a' + 'A') : c);
  out.Str(":00.0");
}

// `    Name                              : value` with nvidia-smi's column (the colon at 42).
LineBuilder& Key(LineBuilder& out, int indent, std::string_view name) {
  for (int i = 0; i < indent; ++i) out.Char(' ');
  out.Str(name);
  for (int i = indent + static_cast<int>(name.size()); i < 42; ++i) out.Char(' ');
  return out.Str(": ");
}

constexpr std::string_view kMonths[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                        "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
constexpr std::string_view kDays[] = {"Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"};

std::string_view ActiveIf(bool on) { return on ? "Active" : "Not Active"; }

// One row of a dcgmi table: `| <left padded to 26> | <right padded to width> |`.
void DcgmRow(LineBuilder& out, std::string_view left, std::string_view right, std::size_t width) {
  out.Str("| ").Str(left);
  for (std::size_t i = left.size(); i < 26; ++i) out.Char(' ');
  out.Str("| ").Str(right);
  for (std::size_t i = right.size(); i < width; ++i) out.Char(' ');
  out.Str("|").EndLine();
}

}  // namespace

void LineFormatter::VisibleDevices(int node, LineBuilder& out) const {
  out.Str("CUDA_VISIBLE_DEVICES=");
  for (int l = 0; l < job_.gpus_per_node; ++l) {
    if (l > 0) out.Char(',');
    const int gpu = job_.PhysicalGpu(node * job_.gpus_per_node + l);
    if (job_.gpu_order == v1::GPU_ORDER_UUID) {
      GpuUuid(out, node, gpu);
    } else {
      out.Int(gpu);
    }
  }
  out.EndLine();
}

// `GPU 3: NVIDIA H100 80GB HBM3 (UUID: GPU-...)`.
void LineFormatter::NvidiaSmiList(const NvidiaSmiSnapshot& r, LineBuilder& out) const {
  for (int gpu = 0; gpu < job_.gpus_per_node; ++gpu) {
    if (gpu == r.lost_gpu) continue;
    out.Str("GPU ").Int(gpu).Str(": ").Str(kProduct).Str(" (UUID: ");
    GpuUuid(out, r.node, gpu);
    out.Str(")").EndLine();
  }
}

void LineFormatter::NvidiaSmiQuery(const NvidiaSmiSnapshot& r, LineBuilder& out) const {
  out.EndLine();
  out.Str("==============NVSMI LOG==============").EndLine();
  out.EndLine();
  const CivilTime c = ToCivil(Local(r.node, r.time + kNsPerSec));  // a second after the table
  const std::int64_t days = DaysFromCivil(c.year, c.month, c.day);
  Key(out, 0, "Timestamp").Str(kDays[((days % 7) + 7) % 7]).Char(' ').Str(kMonths[c.month - 1]).Char(' ');
  out.Padded(c.day, 2, ' ').Char(' ').Zero(c.hour, 2).Char(':').Zero(c.minute, 2).Char(':').Zero(c.second, 2);
  out.Char(' ').Int(c.year).EndLine();
  Key(out, 0, "Driver Version").Str(job_.driver->version).EndLine();
  Key(out, 0, "CUDA Version").Str("12.2").EndLine();
  out.EndLine();
  Key(out, 0, "Attached GPUs").Int(job_.gpus_per_node - (r.lost_gpu >= 0 ? 1 : 0)).EndLine();
  for (int gpu = 0; gpu < job_.gpus_per_node; ++gpu) {
    if (gpu != r.lost_gpu) NvidiaSmiQueryGpu(r, gpu, out);
  }
}

void LineFormatter::NvidiaSmiQueryGpu(const NvidiaSmiSnapshot& r, int gpu, LineBuilder& out) const {
  const bool ecc = gpu == r.ecc_gpu, old = gpu == r.corrected_gpu, hot = gpu == r.throttle_gpu;
  const bool thermal = hot && r.throttle == Throttle::kThermal, brake = hot && r.throttle == Throttle::kPowerBrake;
  const std::string_view era = job_.driver->name;
  const bool remapper = job_.driver->row_remapping;  // Ampere and later; older GPUs retire pages
  out.Str("GPU ");
  SmiBusId(out, gpu);
  out.EndLine();
  Key(out, 4, "Product Name").Str(kProduct).EndLine();
  Key(out, 4, "Persistence Mode").Str("Enabled").EndLine();
  Key(out, 4, "GPU UUID");
  GpuUuid(out, r.node, gpu);
  out.EndLine();
  Key(out, 4, "Minor Number").Int(gpu).EndLine();
  out.Str(era == "418" || era == "470" ? "    Clocks Throttle Reasons" : "    Clocks Event Reasons").EndLine();
  Key(out, 8, "Idle").Str(ActiveIf(false)).EndLine();
  Key(out, 8, "Applications Clocks Setting").Str(ActiveIf(false)).EndLine();
  Key(out, 8, "SW Power Cap").Str(ActiveIf(brake)).EndLine();
  Key(out, 8, "HW Slowdown").Str(ActiveIf(thermal || brake)).EndLine();
  Key(out, 12, "HW Thermal Slowdown").Str(ActiveIf(thermal)).EndLine();
  Key(out, 12, "HW Power Brake Slowdown").Str(ActiveIf(brake)).EndLine();
  Key(out, 8, "Sync Boost").Str(ActiveIf(false)).EndLine();
  Key(out, 8, "SW Thermal Slowdown").Str(ActiveIf(thermal)).EndLine();
  Key(out, 8, "Display Clock Setting").Str(ActiveIf(false)).EndLine();
  out.Str("    ECC Errors").EndLine();
  const int corrected = old ? 177 + r.node % 50 : 0;
  for (std::string_view scope : {std::string_view("Volatile"), std::string_view("Aggregate")}) {
    const bool aggregate = scope == "Aggregate";
    out.Str("        ").Str(scope).EndLine();
    Key(out, 12, "SRAM Correctable").Int(0).EndLine();
    if (era == "560") {
      Key(out, 12, "SRAM Uncorrectable Parity").Int(0).EndLine();
      Key(out, 12, "SRAM Uncorrectable SEC-DED").Int(0).EndLine();
    } else {
      Key(out, 12, "SRAM Uncorrectable").Int(0).EndLine();
    }
    Key(out, 12, "DRAM Correctable").Int(aggregate ? corrected : 0).EndLine();
    Key(out, 12, "DRAM Uncorrectable").Int(ecc ? 1 : 0).EndLine();
  }
  out.Str("    Retired Pages").EndLine();
  if (remapper) {
    Key(out, 8, "Single Bit ECC").Str("N/A").EndLine();
    Key(out, 8, "Double Bit ECC").Str("N/A").EndLine();
    Key(out, 8, "Pending Page Blacklist").Str("N/A").EndLine();
  } else {
    Key(out, 8, "Single Bit ECC").Int(old ? 2 : 0).EndLine();
    Key(out, 8, "Double Bit ECC").Int(ecc ? 1 : 0).EndLine();
    Key(out, 8, "Pending Page Blacklist").Str(ecc ? "Yes" : "No").EndLine();
  }
  out.Str("    Remapped Rows").EndLine();
  if (remapper) {
    const bool failed = ecc && r.remap == RemapState::kFailed;
    Key(out, 8, "Correctable Error").Int(old ? 1 : 0).EndLine();
    Key(out, 8, "Uncorrectable Error").Int(ecc && !failed ? 1 : 0).EndLine();
    Key(out, 8, "Pending").Str(ecc && r.remap == RemapState::kPending ? "Yes" : "No").EndLine();
    Key(out, 8, "Remapping Failure Occurred").Str(failed ? "Yes" : "No").EndLine();
    out.Str("        Bank Remap Availability Histogram").EndLine();
    Key(out, 12, "Max").Int(failed ? 2558 : old || ecc ? 2559 : 2560).Str(" bank(s)").EndLine();
    Key(out, 12, "High").Int(old || (ecc && !failed) ? 1 : 0).Str(" bank(s)").EndLine();
    Key(out, 12, "Partial").Int(0).Str(" bank(s)").EndLine();
    Key(out, 12, "Low").Int(0).Str(" bank(s)").EndLine();
    Key(out, 12, "None").Int(failed ? 2 : 0).Str(" bank(s)").EndLine();
  } else {
    Key(out, 4, "Remapped Rows").Str("N/A").EndLine();  // the header line alone says it
  }
  out.Str("    Temperature").EndLine();
  Key(out, 8, "GPU Current Temp").Int(thermal ? 91 : 33 + (gpu * 7 + r.node) % 9).Str(" C").EndLine();
  Key(out, 8, "GPU Shutdown Temp").Str("92 C").EndLine();
  Key(out, 8, "GPU Slowdown Temp").Str("89 C").EndLine();
  Key(out, 8, "GPU Max Operating Temp").Str("87 C").EndLine();
  Key(out, 8, "Memory Current Temp").Int(thermal ? 88 : 41 + (gpu * 5 + r.node) % 7).Str(" C").EndLine();
  out.Str(era == "418" || era == "470" ? "    Power Readings" : "    GPU Power Readings").EndLine();
  Key(out, 8, "Power Draw").Int(brake ? 298 : 110 + (gpu * 13 + r.node) % 80).Str(".00 W").EndLine();
  Key(out, 8, "Current Power Limit").Str("700.00 W").EndLine();
  out.Str("    Clocks").EndLine();
  Key(out, 8, "Graphics").Int(hot ? 765 : 1980).Str(" MHz").EndLine();
  Key(out, 8, "SM").Int(hot ? 765 : 1980).Str(" MHz").EndLine();
  Key(out, 8, "Memory").Str("2619 MHz").EndLine();
  out.EndLine();
}

// `dcgmi health -c` (DCGM 3.x table): the overall verdict and, per unhealthy GPU, the
// subsystem and DCGM's message (wrapped at the column's width, as dcgmi does).
void LineFormatter::DcgmHealth(const NvidiaSmiSnapshot& r, LineBuilder& out) const {
  const std::string_view rule = "+---------------------------+----------------------------------------------------------+";
  std::string message, system;
  int gpu = -1;
  bool failure = false;
  if (r.ecc_gpu >= 0) {
    gpu = r.ecc_gpu, system = "Memory system", failure = true;
    message = r.remap == RemapState::kFailed
                  ? "GPU " + std::to_string(gpu) + " had uncorrectable memory errors and row remapping failed."
                  : "GPU " + std::to_string(gpu) + " had memory errors and row remappings are pending";
  } else if (r.lost_gpu >= 0) {
    gpu = r.lost_gpu, system = "PCIe system", failure = true;
    message = "GPU " + std::to_string(gpu) + " has fallen off the bus";
  } else if (r.throttle_gpu >= 0) {
    gpu = r.throttle_gpu, system = r.throttle == Throttle::kThermal ? "Thermal system" : "Power system";
    message = "Detected clocks event due to " + std::string(r.throttle == Throttle::kThermal ? "thermal" : "power") +
              " violation in GPU " + std::to_string(gpu) + ".";
  }
  auto row = [&](std::string_view left, std::string_view right) { DcgmRow(out, left, right, 57); };
  out.Str(rule).EndLine();
  out.Str("| Health Monitor Report                                                                |").EndLine();
  out.Str("+===========================+==========================================================+").EndLine();
  const std::string_view verdict = gpu < 0 ? "Healthy" : failure ? "Failure" : "Warning";
  row("Overall Health", verdict);
  if (gpu >= 0) {
    row("GPU", "");
    row("-> " + std::to_string(gpu), verdict);
    row("   -> Errors", "");
    row("      -> " + system, verdict);
    for (std::size_t at = 0; at < message.size();) {  // wrap at a space within 56 columns
      std::size_t n = message.size() - at;
      if (n > 56) n = message.rfind(' ', at + 56) - at;
      row("", std::string_view(message).substr(at, n));
      at += n + (at + n < message.size() ? 1 : 0);
    }
  }
  out.Str(rule).EndLine();
}

// `dcgmi diag -r 1`: the deployment checks; a pending or failed remap fails "Page
// Retirement/Row Remap" on its GPU.
void LineFormatter::DcgmDiag(const NvidiaSmiSnapshot& r, LineBuilder& out) const {
  auto row = [&](std::string_view left, std::string_view right) { DcgmRow(out, left, right, 47); };
  std::string gpus;
  for (int gpu = 0; gpu < job_.gpus_per_node; ++gpu) {
    if (gpu == r.lost_gpu) continue;
    if (!gpus.empty()) gpus += ',';
    gpus += "2330";
  }
  out.Str("Successfully ran diagnostic for group.").EndLine();
  out.Str("+---------------------------+------------------------------------------------+").EndLine();
  out.Str("| Diagnostic                | Result                                         |").EndLine();
  out.Str("+===========================+================================================+").EndLine();
  out.Str("|-----  Metadata  ----------+------------------------------------------------|").EndLine();
  row("DCGM Version", "3.3.5");
  row("Driver Version Detected", job_.driver->version);
  row("GPU Device IDs Detected", gpus);
  out.Str("|-----  Deployment  --------+------------------------------------------------|").EndLine();
  for (std::string_view test : {"Denylist", "NVML Library", "CUDA Main Library", "Permissions and OS Blocks",
                                "Persistence Mode", "Environment Variables"}) {
    row(test, "Pass");
  }
  if (r.ecc_gpu < 0) {
    row("Page Retirement/Row Remap", "Pass");
  } else {
    std::string pass = "Pass - GPUs: ";
    bool first = true;
    for (int gpu = 0; gpu < job_.gpus_per_node; ++gpu) {
      if (gpu == r.ecc_gpu || gpu == r.lost_gpu) continue;
      pass += (first ? "" : ", ") + std::to_string(gpu);
      first = false;
    }
    row("Page Retirement/Row Remap", pass);
    row("", "Fail - GPU: " + std::to_string(r.ecc_gpu));
    row("Warning", r.remap == RemapState::kFailed
                       ? "GPU " + std::to_string(r.ecc_gpu) + " had uncorrectable memory errors and row remapping failed."
                       : "GPU " + std::to_string(r.ecc_gpu) + " had memory errors and row remappings are pending");
  }
  row("Graphics Processes", "Pass");
  row("Inforom", "Pass");
  if (job_.noise.dcgm_diag_level >= 2) DcgmDiagTests(r, out);
  out.Str("+---------------------------+------------------------------------------------+").EndLine();
}

// `dcgmi diag -r 2` / `-r 3`'s plugin tests: `Pass - All`, or `Pass - GPUs: ...` with the faulty
// GPU's `Fail - GPU: N` row and DCGM's message for it (dcgm_errors.h wording).
void LineFormatter::DcgmDiagTests(const NvidiaSmiSnapshot& r, LineBuilder& out) const {
  auto row = [&](std::string_view left, std::string_view right) { DcgmRow(out, left, right, 47); };
  auto test = [&](std::string_view name, int failed, const std::string& warning) {
    if (failed < 0) {
      row(name, "Pass - All");
      return;
    }
    std::string pass = "Pass - GPUs: ";
    bool first = true;
    for (int gpu = 0; gpu < job_.gpus_per_node; ++gpu) {
      if (gpu == failed || gpu == r.lost_gpu) continue;
      pass += (first ? "" : ", ") + std::to_string(gpu);
      first = false;
    }
    row(name, pass);
    row("", "Fail - GPU: " + std::to_string(failed));
    row("Warning", warning);
  };
  const int ecc = r.ecc_gpu, link = r.nvlink_gpu;
  const std::string ecc_word =
      ecc < 0 ? "" : "CUDA APIs have indicated that a double-bit ECC error has occured on GPU " + std::to_string(ecc) + ".";
  const std::string link_word =
      link < 0 ? "" : "GPU " + std::to_string(link) + "'s NvLink link " + std::to_string((link * 5 + r.node) % 18) + " is currently down";
  // DCGM_FR_PCIE_WIDTH_MSG as dcgm_errors.h has it ("... minimum allowed link generation of" is
  // DCGM's own wording for the width check); the plugin's parameter is min_pci_width (16).
  const int pcie = r.pcie_gpu;
  const std::string pcie_word =
      pcie < 0 ? "" : "GPU " + std::to_string(pcie) + " is running at PCI link width 4X, which is below the minimum "
                      "allowed link generation of 16 (parameter 'min_pci_width')";
  out.Str("+-----  Integration  -------+------------------------------------------------+").EndLine();
  test("PCIe", link >= 0 ? link : pcie, link >= 0 ? link_word : pcie_word);
  out.Str("+-----  Hardware  ----------+------------------------------------------------+").EndLine();
  test("GPU Memory", ecc, ecc_word);
  if (job_.noise.dcgm_diag_level < 3) return;
  test("Diagnostic", ecc, ecc < 0 ? "" : "Detected XID 48 for GPU " + std::to_string(ecc));
  out.Str("+-----  Stress  ------------+------------------------------------------------+").EndLine();
  test("Targeted Stress", -1, "");
  test("Targeted Power", -1, "");
  test("Memory Bandwidth", ecc, ecc < 0 ? "" : ecc_word);
  row("EUD Test", "Skip - All");
}

// dcgm-exporter's metrics text: one `# HELP` / `# TYPE` pair per field, then one sample per
// GPU with its labels. Drivers before 535 go with DCGM 2.x names
// (DCGM_FI_DEV_CLOCK_THROTTLE_REASONS).
void LineFormatter::DcgmMetrics(const NvidiaSmiSnapshot& r, LineBuilder& out) const {
  const std::string_view era = job_.driver->name;
  const std::string_view reasons =
      era == "418" || era == "470" ? "DCGM_FI_DEV_CLOCK_THROTTLE_REASONS" : "DCGM_FI_DEV_CLOCKS_EVENT_REASONS";
  struct Field {
    std::string_view name, type, help;
  };
  const Field fields[] = {
      {"DCGM_FI_DEV_GPU_TEMP", "gauge", "GPU temperature (in C)."},
      {"DCGM_FI_DEV_POWER_USAGE", "gauge", "Power draw (in W)."},
      {reasons, "gauge", "Current clock event reasons (bitmask)."},
      {"DCGM_FI_DEV_XID_ERRORS", "gauge", "Value of the last XID error encountered."},
      {"DCGM_FI_DEV_ECC_SBE_VOL_TOTAL", "counter", "Total number of single-bit volatile ECC errors."},
      {"DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", "counter", "Total number of double-bit volatile ECC errors."},
      {"DCGM_FI_DEV_ECC_DBE_AGG_TOTAL", "counter", "Total number of double-bit persistent ECC errors."},
      {"DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS", "counter", "Number of remapped rows for uncorrectable errors"},
      {"DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS", "counter", "Number of remapped rows for correctable errors"},
      {"DCGM_FI_DEV_ROW_REMAP_FAILURE", "gauge", "Whether remapping of rows has failed"},
      {"DCGM_FI_DEV_ROW_REMAP_PENDING", "gauge", "Whether remapping of rows is pending"},
  };
  for (std::size_t f = 0; f < std::size(fields); ++f) {
    out.Str("# HELP ").Str(fields[f].name).Char(' ').Str(fields[f].help).EndLine();
    out.Str("# TYPE ").Str(fields[f].name).Char(' ').Str(fields[f].type).EndLine();
    for (int gpu = 0; gpu < job_.gpus_per_node; ++gpu) {
      if (gpu == r.lost_gpu) continue;
      const bool ecc = gpu == r.ecc_gpu, hot = gpu == r.throttle_gpu, old = gpu == r.corrected_gpu;
      const bool failed = ecc && r.remap == RemapState::kFailed;
      std::int64_t v = 0;
      switch (f) {
        case 0: v = hot && r.throttle == Throttle::kThermal ? 91 : 33 + (gpu * 7 + r.node) % 9; break;
        case 1: v = hot && r.throttle == Throttle::kPowerBrake ? 298 : 110 + (gpu * 13 + r.node) % 80; break;
        case 2: v = !hot ? 0 : r.throttle == Throttle::kThermal ? 0x68 : 0x8c; break;
        case 3: v = gpu == r.xid_gpu ? r.xid : 0; break;
        case 4: v = 0; break;
        case 5: case 6: v = ecc ? 1 : 0; break;
        case 7: v = ecc && !failed ? 1 : 0; break;
        case 8: v = old ? 1 : 0; break;
        case 9: v = failed ? 1 : 0; break;
        default: v = ecc && r.remap == RemapState::kPending ? 1 : 0; break;
      }
      out.Str(fields[f].name).Str("{gpu=\"").Int(gpu).Str("\",UUID=\"");
      GpuUuid(out, r.node, gpu);
      out.Str("\",pci_bus_id=\"");
      SmiBusId(out, gpu);
      out.Str("\",device=\"nvidia").Int(gpu).Str("\",modelName=\"").Str(kProduct).Str("\",Hostname=\"");
      out.Str(job_.hostnames[r.node]).Str("\"} ").Int(v).EndLine();
    }
  }
}

}  // namespace denpex::sim
