/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Device ordering by locality: a device whose local CPU set contains the
 * calling thread's binding is nearest, one that overlaps it is next, the
 * rest follow. Ties keep discovery order (the sort is stable).
 */
#include <hwloc.h>
#include <hwloc/openfabrics-verbs.h>

#include "lfv_locality.h"
#include "lfv_prov.h"

static int lfv_device_distance(hwloc_topology_t topo, hwloc_const_bitmap_t me,
			       struct ibv_device *ibdev)
{
	hwloc_bitmap_t set = hwloc_bitmap_alloc();
	int distance = 2;

	if (!set)
		return distance;
	if (!hwloc_ibv_get_device_cpuset(topo, ibdev, set)) {
		if (hwloc_bitmap_isincluded(me, set))
			distance = 0;
		else if (hwloc_bitmap_intersects(me, set))
			distance = 1;
	}
	hwloc_bitmap_free(set);
	return distance;
}

void lfv_devices_sort(struct lfv_device *devs, size_t count)
{
	struct lfv_device tmp;
	size_t i, j;

	for (i = 1; i < count; i++) {
		tmp = devs[i];
		for (j = i; j > 0 && devs[j - 1].locality > tmp.locality; j--)
			devs[j] = devs[j - 1];
		devs[j] = tmp;
	}
}

void lfv_devices_sort_by_locality(struct lfv_device *devs, size_t count)
{
	hwloc_topology_t topo;
	hwloc_bitmap_t me;
	size_t i;

	if (count < 2)
		return;
	if (hwloc_topology_init(&topo))
		return;
	/* Only CPU sets are needed: skip caches and I/O objects. */
	hwloc_topology_set_all_types_filter(topo, HWLOC_TYPE_FILTER_KEEP_NONE);
	hwloc_topology_set_type_filter(topo, HWLOC_OBJ_PU,
				       HWLOC_TYPE_FILTER_KEEP_ALL);
	if (hwloc_topology_load(topo))
		goto destroy_topo;
	me = hwloc_bitmap_alloc();
	if (!me)
		goto destroy_topo;
	if (hwloc_get_cpubind(topo, me, HWLOC_CPUBIND_THREAD))
		hwloc_bitmap_copy(me, hwloc_topology_get_complete_cpuset(topo));
	for (i = 0; i < count; i++)
		devs[i].locality = lfv_device_distance(topo, me, devs[i].ibdev);
	lfv_devices_sort(devs, count);
	hwloc_bitmap_free(me);
destroy_topo:
	hwloc_topology_destroy(topo);
}
