#include "profile/record/cell_groups.hpp"

namespace refenc::profile {

std::size_t CellGroup::ok() const {
  std::size_t n = 0;
  for (const RequestRecord* r : requests) n += r->ok() ? 1 : 0;
  return n;
}

double CellGroup::wall_s() const {
  double w = 0;
  for (const Cell* c : cells) w += c->wall_s;
  return w;
}

std::vector<double> CellGroup::samples(Stage stage) const {
  std::vector<double> v;
  v.reserve(requests.size());
  for (const RequestRecord* r : requests)
    if (r->ok()) v.push_back(r->seconds(stage));
  return v;
}

ThroughputPool CellGroup::throughput_pool() const { return {samples(Stage::e2e), ok(), wall_s()}; }

std::map<GroupKey, CellGroup> group_cells(const RunRecord& run) {
  std::map<GroupKey, CellGroup> groups;
  for (const Cell& c : run.cells) {
    CellGroup& g = groups[c.key.group()];
    g.key = c.key.group();
    g.cells.push_back(&c);
    for (const RequestRecord& r : run.requests_of(c.key)) g.requests.push_back(&r);
  }
  return groups;
}

}  // namespace refenc::profile
