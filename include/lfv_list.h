/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* Intrusive circular doubly-linked list. Not thread-safe: callers lock. */
#ifndef LFV_LIST_H
#define LFV_LIST_H

#include <stdbool.h>
#include <stddef.h>

#define lfv_container_of(ptr, type, member) \
	((type *)((char *)(ptr) - offsetof(type, member)))

struct lfv_list {
	struct lfv_list *next;
	struct lfv_list *prev;
};

static inline void lfv_list_init(struct lfv_list *head)
{
	head->next = head;
	head->prev = head;
}

static inline bool lfv_list_empty(const struct lfv_list *head)
{
	return head->next == head;
}

static inline void lfv_list_insert_between(struct lfv_list *item,
					   struct lfv_list *prev,
					   struct lfv_list *next)
{
	item->next = next;
	item->prev = prev;
	prev->next = item;
	next->prev = item;
}

static inline void lfv_list_insert_tail(struct lfv_list *head,
					struct lfv_list *item)
{
	lfv_list_insert_between(item, head->prev, head);
}

static inline void lfv_list_insert_head(struct lfv_list *head,
					struct lfv_list *item)
{
	lfv_list_insert_between(item, head, head->next);
}

static inline void lfv_list_remove(struct lfv_list *item)
{
	item->prev->next = item->next;
	item->next->prev = item->prev;
	item->next = item;
	item->prev = item;
}

/* Returns the first item, or NULL when the list is empty. */
static inline struct lfv_list *lfv_list_first(const struct lfv_list *head)
{
	return lfv_list_empty(head) ? NULL : head->next;
}

static inline struct lfv_list *lfv_list_pop_head(struct lfv_list *head)
{
	struct lfv_list *item = lfv_list_first(head);

	if (item)
		lfv_list_remove(item);
	return item;
}

/* Visits every item; the body must not remove the current one. */
#define lfv_list_foreach(item, head) \
	for ((item) = (head)->next; (item) != (head); (item) = (item)->next)

#endif /* LFV_LIST_H */
